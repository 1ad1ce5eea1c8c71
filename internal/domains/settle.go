package domains

import (
	"cmp"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/internal/pace"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// Outcome is what one attempt came to, as its domain settles it.
type Outcome struct {
	circuit.Result
	Stalled time.Duration // of its latency, how long this process was kept from running
	Status  int           // the HTTP status; 0 if no answer came
	// RetryAfter is a throttle's Retry-After header; QuotaWait the reset
	// of a quota its rate-limit headers said was spent (Quota).
	RetryAfter string
	QuotaWait  time.Duration
	Episode    uint64 // the pace's throttle episode the request left in
	Left       int64  // unix nanos the request left
	// Telling counts 401/403 answers to tries through other proxies,
	// sent to tell whose refusal it was: the site's blocked run counts
	// them too (Blocked).
	Telling int
	// Unanswered: the crawl's own end cut the request after it left.
	Unanswered bool
}

// A 429 without a usable Retry-After pauses its domain until the reset of
// a quota its rate-limit headers said was spent, else for
// defaultThrottlePause; none pauses it longer than maxRetryAfter.
const defaultThrottlePause, maxRetryAfter = time.Second, 10 * time.Minute

// Quota takes in the rate-limit headers of t's answer, if it has any, and
// returns how long a quota they say is spent holds (0: none). A throttle's
// own pause (Settle) waits for that reset; any other answer spreads what
// is left of the quota over the time to its reset.
func (b *Set) Quota(t Ticket, h http.Header, throttled bool) (spent time.Duration) {
	now := b.Clock.Now()
	q, ok := pace.ParseQuota(h, now)
	if !ok || t.d == nil {
		return 0
	}
	if q.Remaining == 0 {
		spent = q.Reset
		if throttled {
			return spent
		}
	}
	t.d.Pace.Advertised(now, q)
	return spent
}

// Settled is what settling an outcome decided for its domain.
type Settled struct {
	PausedTill time.Time // a throttle's pause: no request to the domain before it
	// Horizon: the domain has been throttled for the pacing horizon and
	// is held open; the URL is given up.
	Horizon bool
}

// Settle records o, the outcome of t's attempt, in t's domain: its
// pause and pace, its counters, its circuit and early warnings, and the
// hold of a domain throttled past the horizon. It gives t back: give
// each ticket back once, by Settle or Record.
func (b *Set) Settle(t Ticket, o Outcome) (s Settled) {
	d := t.d
	if d == nil {
		return s
	}
	if o.Unanswered {
		d.rareMade().unanswered.Add(1)
	}
	now := b.Clock.Now()
	switch o.Class {
	case circuit.Throttled:
		wait, ok := pace.ParseRetryAfter(o.RetryAfter, now)
		if !ok {
			wait = cmp.Or(o.QuotaWait, defaultThrottlePause)
		}
		wait = min(wait, maxRetryAfter)
		s.PausedTill = now.Add(wait)
		b.Log.Info().Str("event", "paused").Str("domain", d.Name).Dur("for", wait).Int("status", o.Status).
			Msg("breaker: domain asked us to slow down; no request to it before the pause ends")
		if err := d.Circuit.Pause(b.Clock, s.PausedTill); err != nil {
			b.Log.Warn().Str("event", "breaker_store_error").Str("domain", d.Name).Err(err).Msg("breaker: sharing a Retry-After pause failed; this worker still waits")
		}
		limit, gap, changed, horizon := d.Pace.Throttled(now, wait, o.Episode)
		if changed {
			LogPace(b.Log, d.Name, "throttled", limit, gap)
		}
		s.Horizon = horizon
	case circuit.Success:
		d.Pace.Accepted(now, o.Episode)
		d.lastOK.Store(o.Left)
		d.failSince.Store(0)
		if limit, gap, changed := d.Pace.Succeeded(); changed {
			LogPace(b.Log, d.Name, "recovering", limit, gap)
		}
	case circuit.Degraded, circuit.Invalid:
		if o.Status != 0 {
			d.Pace.Accepted(now, o.Episode) // the site answered: it spent its allowance on it
		}
		tr := d.trackerMade() // Record would make it for this failure anyway
		atomic.AddInt32(&tr.fails, 1)
		d.failSince.CompareAndSwap(0, o.Left)
		if o.Status == 0 {
			atomic.AddInt32(&tr.netFails, 1) // no HTTP answer: the site, or our network
		}
	case circuit.Blocked, circuit.Gone, circuit.ClientError:
		d.Pace.Accepted(now, o.Episode)
	}
	if o.Class == circuit.Blocked && o.Telling > 0 {
		b.MoreBlocked(t, o.Telling) // the site refused those tries too
	}
	b.Record(t.WithStalled(o.Stalled), o.Result)
	if s.Horizon {
		b.HoldOpenFor(d, circuit.ReasonThrottleHorizon)
	}
	return s
}

// Reclassify records, in place of was, the class t's attempt already
// settled with, o: an answer whose body was then cut short is Degraded.
func (b *Set) Reclassify(t Ticket, was circuit.Class, o circuit.Result) {
	d := t.d
	if d == nil {
		return
	}
	d.Counts[was].Add(-1)
	if o.Class.Failure() {
		atomic.AddInt32(&d.trackerMade().fails, 1)
	}
	b.Record(t, o)
}
