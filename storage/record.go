package storage

import (
	"fmt"
	"time"
)

// Record is the state of one URL.
type Record struct {
	// ID is the primary key, Colly's request ID; any value, 0 included.
	ID uint64
	// URL is the request URL as the crawler saw it (for humans and logs).
	URL string
	// State is where the URL stands; it must be Valid.
	State State
	// Attempts counts fetch attempts so far; never negative.
	Attempts int
	// LastError is the last attempt's error, if any.
	LastError string
	// NotBefore, for Failed and Parked records, is the earliest next
	// attempt; zero means at once.
	NotBefore time.Time
	// Request is colly's (*Request).Marshal of the request, to re-issue
	// on resume; may be nil. Stores keep a copy.
	Request []byte
	// Seq is the frontier order, assigned by the store on the first Put
	// (a value given to Put is ignored): unique, from 1, increasing in
	// first-Put order, never reused even after a reopen; gaps allowed.
	Seq uint64
	// Updated is when the record was last Put; zero means now.
	Updated time.Time
}

// Validate reports (ErrInvalid) what makes r a record no Store accepts: an
// invalid State, negative Attempts. Every backend checks with it, so all
// refuse the same records with the same errors.
func (r *Record) Validate() error {
	if !r.State.Valid() {
		return fmt.Errorf("%w: record %d (%q) has %v; use one of Pending..Dead", ErrInvalid, r.ID, r.URL, r.State)
	}
	if r.Attempts < 0 {
		return fmt.Errorf("%w: record %d (%q) has negative Attempts %d", ErrInvalid, r.ID, r.URL, r.Attempts)
	}
	return nil
}

// MaxMetaKeyLen is the longest metadata key every backend accepts.
const MaxMetaKeyLen = 1024

// ValidateMetaKey reports (ErrInvalid) a metadata key no Store accepts:
// empty, or over MaxMetaKeyLen.
func ValidateMetaKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty metadata key", ErrInvalid)
	}
	if len(key) > MaxMetaKeyLen {
		return fmt.Errorf("%w: metadata key of %d bytes; the limit is %d", ErrInvalid, len(key), MaxMetaKeyLen)
	}
	return nil
}
