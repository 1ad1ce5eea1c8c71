package bolt_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "crawl.db"), bolt.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// Small batches and a short interval make commits happen in the middle of
// every test, so reads cross the buffer/commit/file boundary all the time.
func TestConformanceSmallBatches(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "crawl.db"), bolt.Config{BatchSize: 7, FlushInterval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	storagetest.Reopen(t, func(t *testing.T, name string) storage.Store {
		s, err := bolt.Open(filepath.Join(dir, name+".db"), bolt.Config{Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
