package redis

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// queueJob is one unit of crawl work, stored whole as one record, retry
// state included. Enqueue fills in ID, Domain, MaxAttempts and EnqueuedAt
// when zero. A claimed job carries a lease: hand it back to exactly one of
// Ack, Fail or Park, which update the fields they change.
type queueJob struct {
	ID          string    `json:"id"`                   // unique in the crawl; empty: random
	URL         string    `json:"url"`                  // absolute, with a host
	Domain      string    `json:"domain"`               // the URL's host:port, lower-cased
	Attempts    int       `json:"attempts"`             // failed: Fail and expired leases, not Park
	MaxAttempts int       `json:"max_attempts"`         // then the dead letters; zero: Config's
	LastError   string    `json:"last_error,omitempty"` // the latest failure's (at most 1 KiB)
	FailedAt    time.Time `json:"-"`                    // the latest failure's (a dead letter's death)
	Request     []byte    `json:"request,omitempty"`    // the serialised Colly request, opaque
	EnqueuedAt  time.Time `json:"-"`
	NotBefore   time.Time `json:"-"` // the earliest time it may be claimed
	LeaseUntil  time.Time `json:"-"` // when it returns to the queue unless handed back
	lease       string    // the claim's token; only the holder may change the job
}

// Exhausted reports whether the job has used all its attempts.
func (j *queueJob) Exhausted() bool { return j.MaxAttempts > 0 && j.Attempts >= j.MaxAttempts }

// String identifies the job in logs and errors.
func (j *queueJob) String() string {
	return fmt.Sprintf("job %s (%s, attempt %d/%d)", j.ID, j.URL, j.Attempts, j.MaxAttempts)
}

// record is a job as stored in the jobs hash: JSON with times in Unix ms.
// Reclaiming an expired lease, the Lua scripts rewrite "attempts",
// "last_error", "failed_at" and "not_before" with cjson; integers stay
// below 2^53 so Lua's doubles keep them exact.
type record struct {
	queueJob
	FailedAt   int64 `json:"failed_at,omitempty"`
	EnqueuedAt int64 `json:"enqueued_at"`
	NotBefore  int64 `json:"not_before,omitempty"`
}

// maxErrorLen bounds LastError so one verbose failure cannot bloat a record.
const maxErrorLen = 1024

// encodeJob is the job's record; strings, integers and bytes always encode.
func encodeJob(j *queueJob) string {
	b, _ := json.Marshal(record{*j, unix(j.FailedAt, time.Time.UnixMilli), unix(j.EnqueuedAt, time.Time.UnixMilli), unix(j.NotBefore, time.Time.UnixMilli)})
	return string(b)
}

func decodeJob(raw string) (*queueJob, error) {
	var r record
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, fmt.Errorf("%w: stored job record is not valid JSON (%v); was the key written by something else?", ErrCorrupt, err)
	}
	if r.ID == "" || r.URL == "" {
		return nil, fmt.Errorf("%w: stored job record lacks an id or url: %.200q", ErrCorrupt, raw)
	}
	j := r.queueJob
	j.FailedAt, j.EnqueuedAt, j.NotBefore = fromUnix(r.FailedAt, time.UnixMilli), fromUnix(r.EnqueuedAt, time.UnixMilli), fromUnix(r.NotBefore, time.UnixMilli)
	return &j, nil
}

// unix is t in f's unit since the epoch, 0 for the zero time.
func unix(t time.Time, f func(time.Time) int64) int64 {
	if t.IsZero() {
		return 0
	}
	return f(t)
}

// fromUnix is unix's inverse with f.
func fromUnix(n int64, f func(int64) time.Time) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return f(n)
}

// truncateError cuts s to maxErrorLen bytes on a rune boundary.
func truncateError(s string) string {
	if len(s) <= maxErrorLen {
		return s
	}
	cut := maxErrorLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
