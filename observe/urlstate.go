package observe

import (
	"errors"
	"fmt"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/gocolly/colly/v2"
)

// URLState is what an attempt leaves its URL in, for an observer that
// keeps URLs (the checkpoint, the Redis queue). StateOf says which.
type URLState uint8

// The states an attempt leaves its URL in.
const (
	// Done: the page came back and was accepted.
	Done URLState = iota + 1
	// Gone: a 404 or 410. Done, and never retried.
	Gone
	// Failed: degraded, invalid, blocked, another 4xx. It spends an attempt.
	Failed
	// ThrottledOut: throttled, and the breaker does not send it again (past
	// its retry budget, or the retry could not be issued). Failed, though
	// the site is healthy.
	ThrottledOut
	// Resent: the breaker sends it again itself (a 429 within its budget,
	// a redirect's hop held for room at its target): nothing to change.
	Resent
	// Parked: back to be fetched no earlier than a time, no attempt spent:
	// handed back (Attempt.ResendAt), or refused (a *circuit.OpenError).
	Parked
	// Cancelled: cut by the crawl itself. No attempt spent.
	Cancelled
	// Settled: nothing more to do though no page was accepted: a redirect
	// to a page already visited, a response aborted after its headers.
	Settled
)

// StateOf says what a leaves its URL in, with the reason a store keeps
// (the class first: "degraded: HTTP 503: Service Unavailable", "gone: HTTP
// 404"; empty for a Success) and, for Parked, the time it waits for. A
// handed back URL (ResendAt) is Parked and one the breaker retries
// (Retrying, not GaveUp) Resent, whatever the class; an Excluded attempt
// is told apart by its error, and one neither refused nor settled is
// Cancelled.
func StateOf(a Attempt) (s URLState, reason string, until time.Time) {
	if a.Result.Class != circuit.Success { // most pages: no reason to build
		if a.Err != nil {
			reason = a.Err.Error()
		}
		if a.Status != 0 && reason == "" {
			reason = fmt.Sprintf("HTTP %d", a.Status)
		} else if a.Status != 0 {
			reason = fmt.Sprintf("HTTP %d: %s", a.Status, reason)
		}
		reason = a.Result.Class.String() + ": " + reason
	}
	var open *circuit.OpenError
	switch {
	case !a.ResendAt.IsZero():
		return Parked, reason, a.ResendAt
	case a.Retrying && !a.GaveUp:
		return Resent, reason, time.Time{}
	case a.Result.Class == circuit.Success:
		return Done, "", time.Time{}
	case a.Result.Class == circuit.Gone:
		return Gone, reason, time.Time{}
	case a.Result.Class == circuit.Throttled:
		return ThrottledOut, reason, time.Time{}
	case a.Result.Class != circuit.Excluded:
		return Failed, reason, time.Time{}
	case errors.As(a.Err, &open):
		return Parked, reason, open.RetryAt
	case errors.As(a.Err, new(*colly.AlreadyVisitedError)), errors.Is(a.Err, colly.ErrAbortedAfterHeaders):
		return Settled, reason, time.Time{}
	}
	return Cancelled, reason, time.Time{}
}
