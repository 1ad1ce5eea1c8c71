package storage

import "time"

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

// MaxMetaKeyLen is the longest metadata key every backend accepts.
const MaxMetaKeyLen = 1024
