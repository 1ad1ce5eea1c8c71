package bolt_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
)

// waitCommits waits (in real time, bounded) for the background commit.
func waitCommits(t *testing.T, s *bolt.Store, n uint64) bolt.Stats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.Stats()
		if st.Commits >= n {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("no background commit: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestBackgroundCommitFollowsTheFlushInterval(t *testing.T) {
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	fc := clocktest.NewFake(start)
	s := mustOpen(t, filepath.Join(t.TempDir(), "crawl.db"), bolt.Config{Clock: fc, FlushInterval: time.Second})
	if err := s.Put(rec(1, storage.Pending), rec(2, storage.Pending), rec(3, storage.Pending)); err != nil {
		t.Fatal(err)
	}
	if !fc.BlockUntil(1, 10*time.Second) {
		t.Fatal("the commit loop never waited on the clock")
	}
	fc.Advance(999 * time.Millisecond)
	if st := s.Stats(); st.Commits != 0 || st.Buffered != 3 || fc.Waiters() != 1 {
		t.Fatalf("before the interval: %+v, %d waiters; want nothing committed, 3 buffered", st, fc.Waiters())
	}
	fc.Advance(time.Millisecond)
	if st := waitCommits(t, s, 1); st.Committed != 3 {
		t.Errorf("the interval's commit wrote %d entries, want 3", st.Committed)
	}
	r, _, err := s.Get(rec(1, 0).ID)
	if err != nil || !r.Updated.Equal(start) {
		t.Errorf("Updated = %v (%v), want the injected clock's %v", r.Updated, err, start)
	}
}

func TestFullBatchCommitsBeforeTheInterval(t *testing.T) {
	fc := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) // never advanced
	s := mustOpen(t, filepath.Join(t.TempDir(), "crawl.db"), bolt.Config{Clock: fc, BatchSize: 10})
	for i := range 10 {
		if err := s.Put(rec(i, storage.Pending)); err != nil {
			t.Fatal(err)
		}
	}
	waitCommits(t, s, 1)
}

// Put blocks, instead of buffering without bound, while four batches wait
// for a commit; it never deadlocks against the commit it waits for.
func TestPutIsBoundedByTheBuffer(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "crawl.db"), bolt.Config{BatchSize: 3, FlushInterval: time.Hour})
	for i := range 2000 {
		if err := s.Put(rec(i, storage.Pending)); err != nil {
			t.Fatal(err)
		}
		// Four batches waiting, plus up to as many in the running commit.
		if b := s.Stats().Buffered; b > 2*4*3 {
			t.Fatalf("after %d Puts %d entries are in memory; the bound is 8 batches", i+1, b)
		}
	}
	c, err := s.Counts()
	if err != nil || c[storage.Pending] != 2000 {
		t.Fatalf("Counts = %v, %v", c, err)
	}
}
