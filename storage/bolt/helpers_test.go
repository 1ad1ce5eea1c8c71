package bolt_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/internal/childtest"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
)

// rec is URL number i in state st, with a request of about 150 bytes.
func rec(i int, st storage.State) storage.Record {
	u := fmt.Sprintf("http://127.0.0.1/item/%06d", i)
	return storage.Record{
		ID:      uint64(i)*0x9E3779B97F4A7C15 + 7,
		URL:     u,
		State:   st,
		Request: fmt.Appendf(nil, `{"URL":%q,"Method":"GET","Depth":1,"Headers":{"User-Agent":["test"]}}`, u),
	}
}

func mustOpen(t *testing.T, path string, c bolt.Config) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(path, c)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s.(*bolt.Store)
}

// makeCheckpoint writes a closed checkpoint of n records (every third done)
// and returns its path.
func makeCheckpoint(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crawl.db")
	s := mustOpen(t, path, bolt.Config{})
	for i := range n {
		st := storage.Pending
		if i%3 == 0 {
			st = storage.Done
		}
		if err := s.Put(rec(i, st)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetMeta("run", []byte("r1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// checkRefused asserts that err is a *bolt.FileError of kind want that
// names path and says what to do.
func checkRefused(t *testing.T, err error, path string, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	var fe *bolt.FileError
	if !errors.As(err, &fe) || fe.Path != path {
		t.Fatalf("err = %#v, want a *bolt.FileError for %s", err, path)
	}
	if !strings.Contains(err.Error(), path) || fe.Hint == "" {
		t.Errorf("error %q should name the file and say what to do", err)
	}
}

// helper runs this test binary as a child process in the given mode (see
// TestHelperProcess) and returns it with a channel of its report lines.
func helper(t *testing.T, mode string, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	return childtest.Start(t, "BW_BOLT_HELPER="+mode, "BW_BOLT_ARGS="+strings.Join(args, "\x1f"))
}

// waitLine waits for the child's next line, which must start with prefix.
func waitLine(t *testing.T, lines <-chan string, prefix string) string {
	t.Helper()
	return childtest.Next(t, lines, prefix)
}

func say(format string, args ...any) { childtest.Say(format, args...) }
