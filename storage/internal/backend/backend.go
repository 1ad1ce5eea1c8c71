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

// CheckStates rejects (ErrInvalid) a Scan for an invalid state.
func CheckStates(states []storage.State) error {
	for _, s := range states {
		if !s.Valid() {
			return fmt.Errorf("%w: cannot scan for %v; use one of Pending..Dead", storage.ErrInvalid, s)
		}
	}
	return nil
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
