// Package backend holds what every checkpoint backend (storage/memory,
// storage/bolt, storage/redis) checks and counts the same way, so that
// they reject the same arguments with the same errors. It is internal:
// a user of a Store never calls it.
package backend

import (
	"fmt"

	"github.com/breakwater-crawl/breakwater/storage"
)

// CheckRecord reports whether r can be stored: its State must be valid and
// Attempts not negative. The error wraps storage.ErrInvalid.
func CheckRecord(r *storage.Record) error {
	if !r.State.Valid() {
		return fmt.Errorf("%w: record %d (%q) has %v; use one of Pending..Dead", storage.ErrInvalid, r.ID, r.URL, r.State)
	}
	if r.Attempts < 0 {
		return fmt.Errorf("%w: record %d (%q) has negative Attempts %d", storage.ErrInvalid, r.ID, r.URL, r.Attempts)
	}
	return nil
}

// CheckStates reports whether every state in states is valid, for a Scan.
// The error wraps storage.ErrInvalid.
func CheckStates(states []storage.State) error {
	for _, s := range states {
		if !s.Valid() {
			return fmt.Errorf("%w: cannot scan for %v; use one of Pending..Dead", storage.ErrInvalid, s)
		}
	}
	return nil
}

// CheckMetaKey reports whether key can name a metadata entry: it must not
// be empty nor longer than storage.MaxMetaKeyLen bytes. The error wraps
// storage.ErrInvalid.
func CheckMetaKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty metadata key", storage.ErrInvalid)
	}
	if len(key) > storage.MaxMetaKeyLen {
		return fmt.Errorf("%w: metadata key of %d bytes; the limit is %d", storage.ErrInvalid, len(key), storage.MaxMetaKeyLen)
	}
	return nil
}

// Tally counts records per state, indexed by State (index 0 is unused).
// Backends keep one to answer Counts.
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
