package redis

import (
	"fmt"
	"time"
)

// queueJob is one unit of crawl work. Its retry state (Attempts, LastError,
// NotBefore) travels inside it: the queue stores the whole job as one
// record, so requeueing, dead-lettering, reclaiming and replaying never
// consult a side table.
//
// Enqueue fills in ID, Domain, MaxAttempts and EnqueuedAt when they are
// zero. A job returned by Claim carries a lease; treat its fields as read
// only and hand it back to exactly one of Ack, Fail or Park (Extend as often
// as needed before that). Those calls update the fields they change.
type queueJob struct {
	// ID identifies the job within its crawl. Enqueueing an ID that is still
	// queued, in flight or dead is a no-op, so an ID derived from the request
	// (say, Colly's request ID) makes enqueueing idempotent across workers.
	// Empty: a random ID.
	ID string
	// URL is the page to fetch. Required, absolute, with a host.
	URL string
	// Domain is the host the job hits, port included, lower-cased: the key
	// of its circuit breaker. Empty: taken from URL.
	Domain string
	// Attempts counts the failed attempts so far: Fail adds one, and so does
	// a lease that expires because the worker never answered. Park does not.
	Attempts int
	// MaxAttempts is how many failed attempts send the job to the dead
	// letters. Zero: the queue's default (Config.MaxAttempts).
	MaxAttempts int
	// LastError is the error of the latest failed attempt (truncated to
	// 1 KiB).
	LastError string
	// FailedAt is when the latest attempt failed; for a dead letter, when it
	// died.
	FailedAt time.Time
	// Request is the serialised request the worker replays, typically from
	// colly's Request.Marshal. The queue does not look inside.
	Request []byte
	// EnqueuedAt is when the job was first enqueued.
	EnqueuedAt time.Time
	// NotBefore is the earliest time the job may be claimed: a delayed
	// start, a backoff after a failure, or a parked domain's reopening.
	NotBefore time.Time
	// LeaseUntil is set by Claim and Extend: the job returns to the queue if
	// the worker has not acked, failed or parked it by then.
	LeaseUntil time.Time

	lease string // the claim's token; only the holder may change the job
}

// Exhausted reports whether the job has used all its attempts: after Fail,
// it is then in the dead letters rather than waiting for a retry.
func (j *queueJob) Exhausted() bool { return j.MaxAttempts > 0 && j.Attempts >= j.MaxAttempts }

// String identifies the job in logs and errors.
func (j *queueJob) String() string {
	return fmt.Sprintf("job %s (%s, attempt %d/%d)", j.ID, j.URL, j.Attempts, j.MaxAttempts)
}
