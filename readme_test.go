package breakwater_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README stays short enough to read: the rest is in docs/.
func TestTheREADMEStaysShort(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 250 {
		t.Errorf("README.md has %d lines, over 250: move detail to docs/", n)
	}
}

// History is in git and the CHANGELOG: no code comment or doc cites an
// issue of the tracker by number.
func TestNoCommentOrDocCitesAnIssueNumber(t *testing.T) {
	cite := regexp.MustCompile(`(?i)\bissues? #?[0-9]+\b`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || path == "CHANGELOG.md" || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := cite.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q: say what and why, not which issue", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
