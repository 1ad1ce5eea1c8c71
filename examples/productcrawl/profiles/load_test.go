package profiles_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/examples/productcrawl/profiles"
)

func TestLoadReadsAFileAndNamesItInErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "profiles.yaml")
	if err := os.WriteFile(good, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := profiles.Load(good)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if set.File() != good || len(set.Domains()) != 3 {
		t.Fatalf("File() = %q, %d domains", set.File(), len(set.Domains()))
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(head+"    window_size: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = profiles.Load(bad)
	if err == nil || !strings.HasPrefix(err.Error(), bad+":4: breaker_profiles.p.window_size: 0: ") {
		t.Fatalf("Load(bad) = %v, want it to name %s:4", err, bad)
	}

	_, err = profiles.Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, profiles.ErrInvalid) {
		t.Fatalf("Load(missing) = %v, want fs.ErrNotExist and not ErrInvalid", err)
	}
	if !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("the error should name the file: %v", err)
	}
}
