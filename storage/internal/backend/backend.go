// Package backend holds the checks and counts every Store backend shares,
// so that all reject the same arguments with the same errors.
package backend

import (
	"fmt"

	"github.com/breakwater-crawl/breakwater/storage"
)

// CheckRecord rejects (ErrInvalid) a record with an invalid State or negative Attempts.
func CheckRecord(r *storage.Record) error {
	if !r.State.Valid() {
		return fmt.Errorf("%w: record %d (%q) has %v; use one of Pending..Dead", storage.ErrInvalid, r.ID, r.URL, r.State)
	}
	if r.Attempts < 0 {
		return fmt.Errorf("%w: record %d (%q) has negative Attempts %d", storage.ErrInvalid, r.ID, r.URL, r.Attempts)
	}
	return nil
}

// States is a set of states, indexed by State (0 unused).
type States [int(storage.Dead) + 1]bool

// Wanted returns the set a Scan for states wants (every state when none),
// rejecting (ErrInvalid) an invalid state.
func Wanted(states []storage.State) (States, error) {
	if len(states) == 0 {
		states = storage.States()
	}
	var want States
	for _, s := range states {
		if !s.Valid() {
			return want, fmt.Errorf("%w: cannot scan for %v; use one of Pending..Dead", storage.ErrInvalid, s)
		}
		want[s] = true
	}
	return want, nil
}

// Scan calls fn for each record of the chunks next returns, until one is
// empty, calling next with the last Seq given to fn (0 at first) and a
// buffer to append to, which holds no record fn has had.
func Scan(fn func(storage.Record) error, next func(after uint64, buf []storage.Record) ([]storage.Record, error)) error {
	var after uint64
	var buf []storage.Record
	for {
		chunk, err := next(after, buf[:0])
		if err != nil || len(chunk) == 0 {
			return err
		}
		for _, r := range chunk {
			if err := fn(r); err != nil {
				return err
			}
		}
		after = chunk[len(chunk)-1].Seq
		clear(chunk) // drop references to what fn has had
		buf = chunk
	}
}

// CheckMetaKey rejects (ErrInvalid) an empty key, or one over storage.MaxMetaKeyLen.
func CheckMetaKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty metadata key", storage.ErrInvalid)
	}
	if len(key) > storage.MaxMetaKeyLen {
		return fmt.Errorf("%w: metadata key of %d bytes; the limit is %d", storage.ErrInvalid, len(key), storage.MaxMetaKeyLen)
	}
	return nil
}

// Tally counts records per state, indexed by State (0 unused).
type Tally [int(storage.Dead) + 1]int

// Map returns the non-zero counts, as Store.Counts reports them.
func (t *Tally) Map() map[storage.State]int {
	m := make(map[storage.State]int)
	for st, n := range t {
		if n > 0 {
			m[storage.State(st)] = n
		}
	}
	return m
}

// CheckOutputEntry rejects (ErrInvalid) an entry with an empty Output or
// Data, or a name over storage.MaxMetaKeyLen.
func CheckOutputEntry(e *storage.OutputEntry) error {
	switch {
	case e.Output == "":
		return fmt.Errorf("%w: output entry of record %d: empty output name", storage.ErrInvalid, e.ID)
	case len(e.Data) == 0:
		return fmt.Errorf("%w: output entry of record %d: no data", storage.ErrInvalid, e.ID)
	case len(e.Output) > storage.MaxMetaKeyLen || len(e.Part) > storage.MaxMetaKeyLen:
		return fmt.Errorf("%w: output entry of record %d: a name over %d bytes", storage.ErrInvalid, e.ID, storage.MaxMetaKeyLen)
	}
	return nil
}
