package observe

import (
	"errors"
	"fmt"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/gocolly/colly/v2"
)

// URLState is what an attempt leaves its URL in (StateOf), for an
// Observer that keeps URLs: the checkpoint, storage/redis's queue.
type URLState uint8

// The states an attempt leaves its URL in.
const (
	Done         URLState = iota + 1 // the page came back and was accepted
	Gone                             // a 404 or 410: done, never retried
	Failed                           // degraded, invalid, blocked, another 4xx: it spends an attempt
	ThrottledOut                     // throttled, not sent again by the breaker: failed, though the site is healthy
	Resent                           // the breaker sends it again itself (a 429, a redirect's held hop): nothing to do
	Parked                           // back no earlier than a time, no attempt spent: handed back (ResendAt), refused
	Cancelled                        // cut short by the crawl itself: no attempt spent
	Settled                          // nothing more to do: a redirect to a page already visited, aborted after headers
)

// StateOf says what a leaves its URL in, with the reason a store keeps
// ("gone: HTTP 404"; empty for a Success) and Parked's time to wait for
// (zero: at once).
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
