package redis

import (
	"fmt"
	"time"
)

// queueJob is one unit of crawl work, stored whole as one record, retry
// state included. Enqueue fills in ID, Domain, MaxAttempts and EnqueuedAt
// when zero. A claimed job carries a lease: hand it back to exactly one of
// Ack, Fail or Park, which update the fields they change.
type queueJob struct {
	// ID identifies the job in its crawl: enqueueing an ID already there is
	// a no-op. Empty: a random ID.
	ID string `json:"id"`
	// URL is the page to fetch: absolute, with a host.
	URL string `json:"url"`
	// Domain is the URL's host, port included, lower-cased.
	Domain string `json:"domain"`
	// Attempts counts failed attempts: Fail and expired leases, not Park.
	Attempts int `json:"attempts"`
	// MaxAttempts sends the job to the dead letters. Zero: Config's.
	MaxAttempts int `json:"max_attempts"`
	// LastError is the latest failed attempt's error (at most 1 KiB).
	LastError string `json:"last_error,omitempty"`
	// FailedAt is when the latest attempt failed (a dead letter died).
	FailedAt time.Time `json:"-"`
	// Request is the serialised Colly request; the queue does not look inside.
	Request []byte `json:"request,omitempty"`
	// EnqueuedAt is when the job was first enqueued.
	EnqueuedAt time.Time `json:"-"`
	// NotBefore is the earliest time the job may be claimed.
	NotBefore time.Time `json:"-"`
	// LeaseUntil is when the job returns to the queue unless handed back.
	LeaseUntil time.Time `json:"-"`

	lease string // the claim's token; only the holder may change the job
}

// Exhausted reports whether the job has used all its attempts.
func (j *queueJob) Exhausted() bool { return j.MaxAttempts > 0 && j.Attempts >= j.MaxAttempts }

// String identifies the job in logs and errors.
func (j *queueJob) String() string {
	return fmt.Sprintf("job %s (%s, attempt %d/%d)", j.ID, j.URL, j.Attempts, j.MaxAttempts)
}
