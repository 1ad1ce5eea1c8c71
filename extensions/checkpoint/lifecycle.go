package checkpoint

import (
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
)

// event is something that happened to a URL (see transition).
type event uint8

const (
	evQueued          event = iota + 1 // discovered or queued, not left (or stopped before it left)
	evLeft                             // about to reach the network
	evSucceeded                        // the page came back and was accepted
	evFailed                           // may pass later (degraded, invalid, blocked, other 4xx)
	evGone                             // 404 or 410: not retried
	evThrottled                        // a 429 or a hop held for room, that the breaker sends again
	evThrottledGaveUp                  // throttled past the breaker's retry budget
	evRefused                          // refused by the breaker without a network call
	evCancelled                        // cut by the crawl itself (its context cancelled)
	evSettled                          // nothing more to do, no page accepted (a redirect to a visited page)
	evFailedInOutage                   // failed while its domain's circuit was not closed (outage.go)
)

// transition returns rec after ev (the table is in docs/checkpoints.md).
// reason becomes LastError on failures; retryAt is the breaker's, for
// evRefused and evFailedInOutage. Done and Dead are final but for evLeft.
func transition(rec storage.Record, ev event, maxAttempts int, reason string, retryAt time.Time) storage.Record {
	final := rec.State == storage.Done || rec.State == storage.Dead
	if final && ev != evLeft && ev != evSucceeded && ev != evSettled && ev != evGone {
		return rec
	}
	giveBack := func() {
		if rec.State == storage.InFlight && rec.Attempts > 0 {
			rec.Attempts--
		}
	}
	switch ev {
	case evQueued:
		rec.State = storage.Pending
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
	case evFailed, evFailedInOutage:
		n, _ := spares(rec.LastError) // the outages that spared it still count
		rec.LastError = withSpares(reason, n)
		switch {
		case rec.Attempts < maxAttempts:
			rec.State = storage.Failed
		case ev == evFailed || n >= outageSpares:
			// Still failing after outageSpares outages: dead.
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
		giveBack()
		rec.LastError = reason
		rec.State = storage.Pending
		if ev == evThrottledGaveUp {
			rec.State = storage.Failed
		}
	case evRefused:
		giveBack()
		rec.State = storage.Parked
		rec.NotBefore = retryAt
		rec.LastError = reason
	case evCancelled:
		giveBack()
		rec.State = storage.Pending
	}
	return rec
}
