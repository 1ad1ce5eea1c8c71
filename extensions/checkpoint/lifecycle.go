package checkpoint

import (
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
)

// event is something that happened to a URL, as the checkpoint records it.
// transition says what each one does to the URL's Record.
type event uint8

const (
	// evQueued: the URL was discovered or queued and has not left yet (also
	// a request stopped before it left by anyone but the breaker).
	evQueued event = iota + 1
	// evLeft: the request is about to reach the network.
	evLeft
	// evSucceeded: the page came back and was accepted.
	evSucceeded
	// evFailed: the attempt failed in a way that may pass later (degraded,
	// invalid, blocked, another 4xx). It spends an attempt.
	evFailed
	// evGone: 404 or 410. The URL does not exist; it is not retried.
	evGone
	// evThrottled: a 429 (or a 503 with Retry-After), or a redirect's hop
	// held for room at its target, that the breaker sends again itself.
	// The attempt is given back.
	evThrottled
	// evThrottledGaveUp: throttled past the breaker's retry budget. The
	// attempt is given back; the URL is re-driven on resume.
	evThrottledGaveUp
	// evRefused: the breaker refused the request without a network call.
	evRefused
	// evCancelled: the attempt left but was cut by the crawl itself (its
	// context cancelled). The attempt is given back.
	evCancelled
	// evSettled: nothing more to do for the URL although no page was
	// accepted: a redirect to a page already visited, a response a
	// callback aborted on purpose.
	evSettled
	// evFailedInOutage: the attempt failed while its domain's circuit was
	// not closed (open, or half-open: a probe failed). The failure is the
	// outage's, not the page's: it spends an attempt, but the last one
	// parks the URL until retryAt with one attempt left instead of killing
	// it (outage.go).
	evFailedInOutage
)

var eventNames = [...]string{"", "queued", "left", "succeeded", "failed", "gone", "throttled", "throttled_gave_up", "refused", "cancelled", "settled", "failed_in_outage"}

// String returns the event's name as logs show it.
func (e event) String() string {
	if int(e) < len(eventNames) && e != 0 {
		return eventNames[e]
	}
	return "event(?)"
}

// transition returns rec after ev, for a crawl that gives each URL
// maxAttempts attempts. reason is the attempt's error (kept as LastError
// by the events that fail), retryAt the breaker's RetryAt for evRefused
// and evFailedInOutage.
// It is the whole lifecycle table:
//
//	event            state after                     attempts
//	queued           pending                         unchanged
//	left             in flight                       +1
//	succeeded        done                            unchanged
//	failed           failed; dead once attempts ≥ max unchanged (spent by left)
//	gone             dead                            unchanged
//	throttled        pending                         −1 (given back)
//	throttled_gave_up failed                         −1 (given back)
//	refused          parked, NotBefore = retryAt     unchanged; −1 if it had left
//	cancelled        pending                         −1 if it had left
//	settled          done                            unchanged
//	failed_in_outage failed; once attempts ≥ max:    unchanged; set to max−1
//	                 parked, NotBefore = retryAt     once parked
//
// Done and Dead are final: no event but evLeft (a new attempt asked for by
// the user) moves a URL out of them.
func transition(rec storage.Record, ev event, maxAttempts int, reason string, retryAt time.Time) storage.Record {
	final := rec.State == storage.Done || rec.State == storage.Dead
	giveBack := func() {
		if rec.State == storage.InFlight && rec.Attempts > 0 {
			rec.Attempts--
		}
	}
	switch ev {
	case evQueued:
		if !final {
			rec.State = storage.Pending
		}
	case evLeft:
		rec.State = storage.InFlight
		rec.Attempts++
		rec.NotBefore = time.Time{}
	case evSucceeded, evSettled:
		rec.State = storage.Done
		rec.NotBefore = time.Time{}
		if ev == evSucceeded {
			rec.LastError = ""
		} else if reason != "" {
			rec.LastError = reason
		}
	case evFailed:
		if final {
			break
		}
		n, _ := spares(rec.LastError) // the outages that spared it still count
		rec.LastError = withSpares(reason, n)
		if rec.Attempts >= maxAttempts {
			rec.State = storage.Dead
		} else {
			rec.State = storage.Failed
		}
	case evFailedInOutage:
		if final {
			break
		}
		n, _ := spares(rec.LastError)
		rec.LastError = withSpares(reason, n)
		switch {
		case rec.Attempts < maxAttempts:
			rec.State = storage.Failed
		case n >= outageSpares:
			// A site still failing after outageSpares outages has not
			// recovered: its URLs die so that a person looks.
			rec.State = storage.Dead
		default:
			rec.State = storage.Parked
			rec.NotBefore = retryAt
			rec.Attempts = maxAttempts - 1
			rec.LastError = withSpares(reason, n+1)
		}
	case evGone:
		rec.State = storage.Dead
		rec.LastError = reason
	case evThrottled, evThrottledGaveUp:
		if final {
			break
		}
		giveBack()
		rec.LastError = reason
		rec.State = storage.Pending
		if ev == evThrottledGaveUp {
			rec.State = storage.Failed
		}
	case evRefused:
		if final {
			break
		}
		giveBack()
		rec.State = storage.Parked
		rec.NotBefore = retryAt
		rec.LastError = reason
	case evCancelled:
		if final {
			break
		}
		giveBack()
		rec.State = storage.Pending
	}
	return rec
}
