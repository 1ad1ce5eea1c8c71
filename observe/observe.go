// Package observe is how an extension follows what a breaker decides
// without importing it: the checkpoint, the Redis queue and the metrics
// are Observers, and a breaker is their Subject. breakwater.Use ties every
// Observer it is given to the crawl's breaker before the crawl.
//
//	func (x *MyExtension) Observe(s observe.Subject) error {
//		return s.Hook(observe.Hooks{OnAttempt: x.attempted})
//	}
//
// An Observer that keeps URLs reads what an attempt leaves its URL in
// with StateOf; Subjects keeps it from hooking one subject twice.
package observe

import (
	"slices"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/gocolly/colly/v2"
)

// Attempt is one request that left, with its classified outcome, as
// OnAttempt hooks see it.
type Attempt struct {
	Request *colly.Request
	Domain  string
	Result  circuit.Result
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// Err is what went wrong: Colly's error, or the validator's rejection
	// for an Invalid page; nil for a Success.
	Err error
	// Retrying is set when the breaker itself sends the URL again after a
	// Retry-After pause (a 429 within the throttle-retry budget).
	Retrying bool
	// ResendAt is set when the breaker hands a throttled URL back instead
	// of sending it again itself, its re-send being due later than
	// Hooks.ResendHorizon allows holding it: no request to the domain could
	// leave before ResendAt. The URL is not a failure of its own; a hook
	// that keeps URLs puts it back until then.
	ResendAt time.Time
	// PausedUntil is set for a throttled answer (a 429): the end of the
	// pause it put its domain in, no request to it leaving before then
	// (Retry-After, or the breaker's own pause without one).
	PausedUntil time.Time
	// GaveUp is set when a throttled URL ran out of throttle retries, or
	// its retry could not be issued, or its domain throttled for longer
	// than the breaker's throttle horizon.
	GaveUp bool
	// Cancelled is set when the crawl's own context ended the attempt: it
	// says nothing about the site, and the URL is listed unfinished.
	Cancelled bool
	// Cached is set when Colly's CacheDir answered: nothing was sent, the
	// circuit and the pace did not count it, and Result.Latency is 0. The
	// URL is settled by the cached answer as by the site's.
	Cached bool
}

// Hooks are what an observer wants to hear. Each is called in the
// goroutine that caused the event and must not block; a nil one is not
// called.
type Hooks struct {
	// OnAttempt is called once for every attempt that left, and for every
	// answer of Colly's cache (Attempt.Cached), with its classified
	// outcome (after validation). Refused requests go to OnRefused instead.
	OnAttempt func(Attempt)
	// OnRefused is called for every request the breaker refused, with the
	// refusal. The request never reached the network; the hook is where a
	// checkpoint parks it so it is not lost.
	OnRefused func(r *colly.Request, err *circuit.OpenError)
	// OnTransition is called after every state change of any domain's
	// circuit.
	OnTransition func(circuit.Transition)
	// OnNotVisited is called for every URL handed to the breaker's
	// NotVisited that it lists unfinished (a request Colly refused before
	// any callback), as a request with that URL and Colly's error, and for
	// a clone's request the crawl's end stopped before it left: the hook is
	// where a checkpoint keeps it for the next run.
	OnNotVisited func(r *colly.Request, err error)
	// OnDegrading is called when a domain's median success latency climbs
	// past its profile's slope (SlopeMultiple × the baseline), with the
	// median and the baseline.
	OnDegrading func(domain string, median, baseline time.Duration)
	// ResendHorizon, if above 0, asks the breaker to hand a throttled URL
	// back (Attempt.ResendAt) rather than hold it when its re-send is due
	// later than this: a worker of a shared queue that ends its run once
	// all that is left must wait needs it.
	ResendHorizon time.Duration
}

// A Subject takes observers' hooks: *breaker.Breaker is one.
type Subject interface {
	// Hook adds h to the subject's hooks, before the crawl.
	Hook(h Hooks) error
}

// An Observer follows a Subject. breakwater.Use calls Observe once, before
// the crawl; wiring by hand, call it yourself. Observing the same subject
// twice adds nothing.
type Observer interface {
	Observe(s Subject) error
}

// Subjects is the subjects an Observer follows, so that observing one
// twice adds nothing: Observe hooks s only if Add(s) reports it new. The
// zero Subjects is empty; it is safe for concurrent use.
type Subjects struct {
	mu sync.Mutex
	s  []Subject
}

// Add reports whether s is new to the set, and adds it.
func (x *Subjects) Add(s Subject) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if slices.Contains(x.s, s) {
		return false
	}
	x.s = append(x.s, s)
	return true
}
