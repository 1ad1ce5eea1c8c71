// Package backend holds what storage/bolt and storage/memory share beyond
// the checks every backend makes (Record.Validate and the like, in package
// storage): the states a Scan wants, the scan loop, the per-state counts.
package backend

import (
	"fmt"

	"github.com/breakwater-crawl/breakwater/storage"
)

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
