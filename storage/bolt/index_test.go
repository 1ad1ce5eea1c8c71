package bolt_test

import (
	"bytes"
	"path/filepath"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
)

// tamper changes the closed checkpoint at path with bbolt directly.
func tamper(t *testing.T, path string, fn func(tx *bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// deleteNth deletes the n-th key of a bucket.
func deleteNth(bucket string, n int) func(tx *bbolt.Tx) error {
	return func(tx *bbolt.Tx) error {
		c := tx.Bucket([]byte(bucket)).Cursor()
		c.First()
		for range n {
			c.Next()
		}
		return c.Delete()
	}
}

// Open loads the ID log and the state index into memory and checks them
// against each other and the counts; a file where they disagree is
// refused, untouched, before anything is read from it or written to it.
func TestOpenRefusesIndexesThatDisagree(t *testing.T) {
	for name, fn := range map[string]func(tx *bbolt.Tx) error{
		"an ID run missing":       deleteNth("ids", 0),
		"a state entry missing":   deleteNth("states", 7),
		"a state entry doubled":   func(tx *bbolt.Tx) error { return moveState(tx, storage.Failed, false) },
		"a state entry misplaced": func(tx *bbolt.Tx) error { return moveState(tx, storage.Failed, true) },
		"the counts wrong": func(tx *bbolt.Tx) error {
			return tx.Bucket([]byte("breakwater")).Put([]byte("counts"), make([]byte, 48))
		},
		"an ID run under a new key": rekeyFirstRun,
	} {
		t.Run(name, func(t *testing.T) {
			path := makeCheckpoint(t, 3000)
			tamper(t, path, fn)
			refusedUntouched(t, path, storage.ErrCorrupt, bolt.Config{})
		})
	}
}

// moveState adds a state index entry in state st for the first record
// (keeping its own: it is then in two states), or moves it there.
func moveState(tx *bbolt.Tx, st storage.State, move bool) error {
	c := tx.Bucket([]byte("states")).Cursor()
	k, _ := c.First()
	moved := append([]byte{byte(st)}, k[1:]...)
	if move {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return tx.Bucket([]byte("states")).Put(moved, []byte{})
}

// rekeyFirstRun moves the first ID run one Seq on: its checksum, which
// covers the key, no longer matches.
func rekeyFirstRun(tx *bbolt.Tx) error {
	b := tx.Bucket([]byte("ids"))
	k, v := b.Cursor().First()
	nk := bytes.Clone(k)
	nk[7]++
	v = bytes.Clone(v)
	if err := b.Delete(k); err != nil {
		return err
	}
	return b.Put(nk, v)
}

// A missing request, a request without a record and a missing record
// are caught at Open, with or without Config.Verify, before anything is
// written.
func TestOpenRefusesRecordsAndRequestsThatDisagree(t *testing.T) {
	for name, fn := range map[string]func(tx *bbolt.Tx) error{
		"a request missing": deleteNth("requests", 1500),
		"a record missing":  deleteNth("records", 1500),
		"a request without record": func(tx *bbolt.Tx) error {
			return tx.Bucket([]byte("requests")).Put([]byte{0, 0, 0, 0, 0, 0, 0x0f, 0xa0}, []byte("{}\x00\x00\x00\x00"))
		},
		"a record past the counter": func(tx *bbolt.Tx) error {
			return tx.Bucket([]byte("records")).Put([]byte{0, 0, 0, 0, 0, 1, 0, 0}, []byte{2, 1})
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := makeCheckpoint(t, 3000)
			tamper(t, path, fn)
			refusedUntouched(t, path, storage.ErrCorrupt, bolt.Config{})
			refusedUntouched(t, path, storage.ErrCorrupt, bolt.Config{Verify: true})
		})
	}
}

// A record's request is stored apart and written when it changes: every
// change survives a reopen (with the full check), whether the request was
// last written by an earlier commit, is being written by a running one,
// or is still buffered; nil and empty stay apart.
func TestRequestChangesSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	r := rec(1, storage.Pending)
	other := rec(2, storage.Pending)
	steps := []struct {
		name  string
		st    storage.State
		req   []byte
		flush bool
	}{
		{"new", storage.Pending, []byte("A"), true},
		{"state change, same request, committed before", storage.InFlight, []byte("A"), true},
		{"changed after a commit", storage.Failed, []byte("B"), true},
		{"changed, then changed back, before a commit", storage.Pending, []byte("C"), false},
		{"back", storage.InFlight, []byte("B"), true},
		{"gone", storage.Done, nil, true},
		{"empty", storage.Done, []byte{}, true},
		{"again", storage.Failed, []byte("D"), false},
	}
	s := mustOpen(t, path, bolt.Config{})
	for _, step := range steps {
		r.State, r.Request = step.st, step.req
		if err := s.Put(r, other); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			got, ok, err := s.Get(r.ID)
			if err != nil || !ok || got.State != step.st || !bytes.Equal(got.Request, step.req) || (got.Request == nil) != (step.req == nil) {
				t.Fatalf("%s, %s: Get = %v %q (nil %v), %v, %v; want %v %q (nil %v)", step.name, when,
					got.State, got.Request, got.Request == nil, ok, err, step.st, step.req, step.req == nil)
			}
		}
		check("buffered")
		if !step.flush {
			continue
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		check("committed")
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = mustOpen(t, path, bolt.Config{Verify: true})
		check("reopened")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path, bolt.Config{Verify: true})
	if got, _, _ := s.Get(r.ID); string(got.Request) != "D" {
		t.Errorf("after Close: Request %q, want D", got.Request)
	}
}

// Records created in this run and records loaded from the file at Open
// are told apart from IDs the store does not hold, and keep their Seq.
func TestIndexAfterReopen(t *testing.T) {
	path := makeCheckpoint(t, 2000)
	s := mustOpen(t, path, bolt.Config{})
	seqs := map[uint64]uint64{}
	for i := range 2000 {
		got, ok, err := s.Get(rec(i, 0).ID)
		if err != nil || !ok {
			t.Fatalf("record %d: %v %v", i, ok, err)
		}
		seqs[got.Seq] = got.ID
	}
	if len(seqs) != 2000 {
		t.Fatalf("%d distinct Seqs for 2000 records", len(seqs))
	}
	for i := 2000; i < 4000; i++ {
		if _, ok, err := s.Get(rec(i, 0).ID); ok || err != nil {
			t.Fatalf("record %d, never Put: %v %v", i, ok, err)
		}
	}
	for i := 1000; i < 3000; i++ {
		if err := s.Put(rec(i, storage.Failed)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3000 {
		got, ok, err := s.Get(rec(i, 0).ID)
		if err != nil || !ok {
			t.Fatalf("record %d: %v %v", i, ok, err)
		}
		if i < 2000 && seqs[got.Seq] != got.ID {
			t.Fatalf("record %d moved to Seq %d", i, got.Seq)
		}
	}
	c, err := s.Counts()
	if err != nil {
		t.Fatal(err)
	}
	// makeCheckpoint finishes every third record; 1000 to 2999 failed.
	if c[storage.Done] != 334 || c[storage.Failed] != 2000 || c[storage.Pending] != 666 || len(c) != 3 {
		t.Errorf("Counts = %v, want 334 done, 666 pending, 2000 failed", c)
	}
}
