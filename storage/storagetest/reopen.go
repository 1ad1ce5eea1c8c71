package storagetest

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/storage"
)

// NamedOpener opens the persistent store called name (a file, a key
// prefix). Opening the same name after Close must find what was stored.
// Reopen closes the stores it gets.
type NamedOpener func(t *testing.T, name string) storage.Store

// Reopen checks that a persistent backend keeps records, counts, frontier
// order and metadata across Close and open, and never reuses a Seq.
func Reopen(t *testing.T, open NamedOpener) {
	t.Helper()
	t.Run("DataSurvivesCloseAndOpen", func(t *testing.T) { testSurvives(t, open) })
	t.Run("SeqIsNeverReusedAfterReopen", func(t *testing.T) { testSeqAfterReopen(t, open) })
}

func reopen(t *testing.T, open NamedOpener, old storage.Store, name string) storage.Store {
	t.Helper()
	if err := old.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s := open(t, name)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func testSurvives(t *testing.T, open NamedOpener) {
	s := open(t, "survives")
	t.Cleanup(func() { _ = s.Close() })
	const n = 1000
	want := map[storage.State]int{}
	for i := range n {
		st := storage.States()[i%6]
		r := rec(i, st)
		r.Attempts = i % 4
		r.Request = []byte(r.URL)
		mustPut(t, s, r)
		want[st]++
	}
	if err := s.SetMeta("run", []byte("id-1")); err != nil {
		t.Fatal(err)
	}
	before := scanAll(t, s)
	// No Flush: Close must flush.
	s = reopen(t, open, s, "survives")
	after := scanAll(t, s)
	if len(after) != len(before) {
		t.Fatalf("after reopen Scan found %d records, want %d", len(after), len(before))
	}
	for k := range before {
		b, a := before[k], after[k]
		if a.ID != b.ID || a.Seq != b.Seq || a.State != b.State || a.Attempts != b.Attempts ||
			a.URL != b.URL || string(a.Request) != string(b.Request) || !a.Updated.Equal(b.Updated) {
			t.Fatalf("record %d changed across reopen:\nbefore %+v\n after %+v", k, b, a)
		}
	}
	checkCounts(t, s, want)
	if v, ok, err := s.Meta("run"); err != nil || !ok || string(v) != "id-1" {
		t.Errorf("Meta after reopen = %q, %v, %v", v, ok, err)
	}
	// Updates after a reopen are kept too.
	for i := 0; i < n; i += 2 {
		mustPut(t, s, rec(i, storage.Done))
	}
	s = reopen(t, open, s, "survives")
	done := len(scanAll(t, s, storage.Done))
	wantDone := 0
	for i := range n {
		if i%2 == 0 || storage.States()[i%6] == storage.Done {
			wantDone++
		}
	}
	if done != wantDone {
		t.Errorf("after second reopen %d records are done, want %d", done, wantDone)
	}
}

func testSeqAfterReopen(t *testing.T, open NamedOpener) {
	s := open(t, "seq")
	t.Cleanup(func() { _ = s.Close() })
	for i := range 10 {
		mustPut(t, s, rec(i, storage.Pending))
	}
	last := mustGet(t, s, rec(9, 0).ID).Seq
	first := mustGet(t, s, rec(0, 0).ID).Seq
	s = reopen(t, open, s, "seq")
	mustPut(t, s, rec(100, storage.Pending), rec(0, storage.Done))
	if got := mustGet(t, s, rec(100, 0).ID).Seq; got <= last {
		t.Errorf("new record after reopen got Seq %d, not above the last one before (%d)", got, last)
	}
	if got := mustGet(t, s, rec(0, 0).ID).Seq; got != first {
		t.Errorf("old record put after reopen changed Seq %d -> %d", first, got)
	}
}
