package storage

import (
	"fmt"
	"time"
)

// Record is the state of one URL.
type Record struct {
	// ID is the primary key: Colly's request ID, FNV-1a 64 of the
	// normalised URL followed by the request body. Any value, 0 included,
	// is a valid key.
	ID uint64
	// URL is the request URL as the crawler saw it (for humans and logs).
	URL string
	// State is where the URL stands; it must be Valid.
	State State
	// Attempts counts fetch attempts so far; never negative.
	Attempts int
	// LastError is the last attempt's error, if any.
	LastError string
	// NotBefore, for Failed and Parked records, is the earliest time the
	// URL may be attempted again. Zero means at once.
	NotBefore time.Time
	// Request is the request as colly's (*Request).Marshal produced it, so
	// that it can be re-issued on resume; may be nil. Stores keep a copy:
	// the caller may reuse its slice after Put returns.
	Request []byte
	// Seq is the frontier order. The store assigns it on the record's
	// first Put and keeps it on later Puts; a value given to Put is
	// ignored. Seqs are unique within a store, start at 1, increase in the
	// order records are first Put and are never reused, not even after a
	// reopen. They may have gaps.
	Seq uint64
	// Updated is when the record was last Put. If the caller leaves it
	// zero, the store sets it to the current time.
	Updated time.Time
}

// Validate reports whether r can be stored: its State must be valid and
// Attempts not negative. The error wraps ErrInvalid.
func (r *Record) Validate() error {
	if !r.State.Valid() {
		return fmt.Errorf("%w: record %d (%q) has %v; use one of Pending..Dead", ErrInvalid, r.ID, r.URL, r.State)
	}
	if r.Attempts < 0 {
		return fmt.Errorf("%w: record %d (%q) has negative Attempts %d", ErrInvalid, r.ID, r.URL, r.Attempts)
	}
	return nil
}

// ValidateStates reports whether every state in states is valid, for a
// Scan. The error wraps ErrInvalid.
func ValidateStates(states []State) error {
	for _, s := range states {
		if !s.Valid() {
			return fmt.Errorf("%w: cannot scan for %v; use one of Pending..Dead", ErrInvalid, s)
		}
	}
	return nil
}

// ValidateMetaKey reports whether key can name a metadata entry: it must
// not be empty nor longer than MaxMetaKeyLen bytes. The error wraps
// ErrInvalid.
func ValidateMetaKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty metadata key", ErrInvalid)
	}
	if len(key) > MaxMetaKeyLen {
		return fmt.Errorf("%w: metadata key of %d bytes; the limit is %d", ErrInvalid, len(key), MaxMetaKeyLen)
	}
	return nil
}

// MaxMetaKeyLen is the longest metadata key every backend accepts.
const MaxMetaKeyLen = 1024
