package checkpoint

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
)

// Observe ties the checkpoint to a breaker (observe.Observer; breakwater.Use
// calls it). The breaker's outcome of each attempt then decides the URL's
// state, a refusal parks it until RetryAt, and each circuit that opens or
// closes is saved at once. First it restores each domain's saved circuit
// into s (docs/checkpoints.md). A second call with
// the same breaker does nothing.
func (cp *Checkpoint) Observe(s observe.Subject) error {
	if s == nil {
		return errors.New("checkpoint: Observe: nil breaker; pass the breaker the crawl uses")
	}
	if !cp.observed.Add(s) {
		return nil // already following s
	}
	cp.viaBreaker.Store(true)
	hooks := observe.Hooks{OnAttempt: cp.onOutcome, OnRefused: cp.onRefused, OnTransition: cp.onTransition, OnNotVisited: cp.onNotVisited}
	if err := s.Hook(hooks); err != nil {
		return err
	}
	if d, ok := s.(observe.Domains); ok {
		return cp.restore(d) // a breaker: its saved circuits come back
	}
	return nil
}

// restore attaches b and gives it back each domain's saved history.
func (cp *Checkpoint) restore(b observe.Domains) error {
	cp.mu.Lock()
	cp.b = b
	saved := cp.openDomainsLocked(true)
	cp.unlock()
	now := cp.now()
	// Requests in flight at the last run's death count as failures.
	suspect, err := cp.inFlightByDomain()
	errs := []error{err}
	for i := range saved {
		if n := suspect[saved[i].Domain]; n > 0 && !saved[i].open() {
			saved[i].Failures += n
			saved[i].Window += n
		}
		delete(suspect, saved[i].Domain)
	}
	for d, n := range suspect {
		saved = append(saved, savedCircuit{Domain: d, Window: n, Failures: n})
	}
	for _, s := range saved {
		snap := observe.DomainCircuit{Domain: s.Domain, State: circuit.Closed, Trips: s.Trips,
			WindowLen: s.Window, WindowFailures: s.Failures, HaltUntil: s.HaltUntil}
		ev := cp.opt.Logger.Info().Str("event", "breaker_restored").Str("domain", s.Domain).Int("trips", s.Trips)
		switch {
		case s.open():
			snap.State, snap.RetryAt, snap.WindowLen, snap.WindowFailures = circuit.Open, s.RetryAt, 0, 0
			how := "open"
			if !s.RetryAt.After(now) {
				how = "probation"
			}
			ev = ev.Time("retry_at", s.RetryAt).Str("restored", how)
		default:
			ev = ev.Str("restored", "window").Int("window", s.Window).Int("failures", s.Failures)
		}
		if err := b.Restore(snap); err != nil {
			errs = append(errs, fmt.Errorf("checkpoint: restoring the circuit of %s: %w", s.Domain, err))
			continue
		}
		ev.Msg("checkpoint: the circuit's state at the last save is restored")
	}
	return errors.Join(errs...)
}

// onTransition saves an opened circuit (reviving its dead) or forgets a closed one.
func (cp *Checkpoint) onTransition(t circuit.Transition) {
	cp.mu.Lock()
	defer cp.unlock()
	switch t.To {
	case circuit.Open:
		cp.reviveLocked(t.Key, t.RetryAt, false)
		cp.saved[t.Key] = savedCircuit{Domain: t.Key, RetryAt: t.RetryAt.UTC(), Trips: t.Trips}
	case circuit.Closed:
		if _, ok := cp.saved[t.Key]; !ok {
			return
		}
		delete(cp.saved, t.Key)
	default:
		return
	}
	cp.writeJSONLocked(keyBreakers, cp.saved)
}

// saveBreakersLocked refreshes the saved states from the breaker's.
func (cp *Checkpoint) saveBreakersLocked() {
	if cp.b == nil {
		return
	}
	for _, s := range cp.b.Circuits() {
		cp.keepLocked(s)
	}
	cp.writeJSONLocked(keyBreakers, cp.saved)
}

// keepLocked sets what is saved of one domain's circuit and pause.
func (cp *Checkpoint) keepLocked(s observe.DomainCircuit) {
	var halt time.Time
	if s.HaltUntil.After(cp.now()) {
		halt = s.HaltUntil.UTC()
	}
	switch {
	case s.State == circuit.Open:
		cp.saved[s.Domain] = savedCircuit{Domain: s.Domain, RetryAt: s.RetryAt.UTC(), Trips: s.Trips, HaltUntil: halt}
	case s.State == circuit.Closed && (s.WindowFailures > 0 || s.Unanswered > 0 || !halt.IsZero()):
		// A request cut off by the crawl's end counts as a failure.
		cp.saved[s.Domain] = savedCircuit{Domain: s.Domain, Trips: s.Trips, Window: s.WindowLen + s.Unanswered,
			Failures: s.WindowFailures + s.Unanswered, HaltUntil: halt}
	case s.State == circuit.Closed:
		delete(cp.saved, s.Domain)
	}
}

// saveDomainLocked saves and flushes a domain's window after a failure or 429.
func (cp *Checkpoint) saveDomainLocked(domain string) {
	if cp.b == nil {
		return
	}
	if ss := cp.b.Circuits(domain); len(ss) == 1 && ss[0].State == circuit.Closed {
		cp.keepLocked(ss[0])
		cp.writeJSONLocked(keyBreakers, cp.saved)
		// Now: each failure lost to a kill is one more request into a failing site.
		if cp.flush(true) == nil {
			cp.fail(cp.store.Flush())
		}
	}
}

// onRefused parks a request the breaker refused.
func (cp *Checkpoint) onRefused(r *colly.Request, err *circuit.OpenError) {
	cp.active.Add(1)
	defer cp.end()
	e, l := cp.lockEntry(r, true) // with no collector, refused at the transport: a clone's
	if e == nil {
		return
	}
	defer l.Unlock()
	cp.applyLocked(r, e, evRefused, err.Error(), err.RetryAt)
}

// onNotVisited keeps a URL Colly refused before any callback pending.
func (cp *Checkpoint) onNotVisited(r *colly.Request, _ error) {
	cp.active.Add(1)
	defer cp.end()
	e, l := cp.lockEntry(r, false)
	if e == nil {
		return
	}
	defer l.Unlock()
	if e.rec.State == 0 || e.rec.State == storage.Pending {
		cp.applyLocked(r, e, evQueued, "", time.Time{})
	}
	cp.live.take(r)
}

// onOutcome records the breaker's outcome of an attempt that left, or of an
// answer of Colly's cache (counted an attempt). A page
// that came back (done, gone, settled) takes no process-wide lock; a
// failure or throttle takes mu, for the domain's saved circuit.
func (cp *Checkpoint) onOutcome(a observe.Attempt) {
	cp.active.Add(1)
	defer cp.end()
	ev, reason, retryAt := eventOf(a)
	fails := a.Result.Class.Failure() || a.Result.Class == circuit.Throttled
	if fails || (ev != evSucceeded && ev != evGone && ev != evSettled) {
		cp.mu.Lock()
		defer cp.mu.Unlock() // before done: LIFO
	}
	var l *sync.Mutex
	e, ok := cp.live.get(a.Request)
	if !ok {
		// A clone's request (no callbacks of ours): an attempt that left.
		if e, l = cp.lockEntry(a.Request, true); e == nil {
			return
		}
		cp.applyLocked(a.Request, e, evLeft, "", time.Time{})
	} else {
		l = cp.idLock(e.id)
		l.Lock()
	}
	if a.Cached && !e.left {
		// Colly's cache answered: an attempt, written with its outcome.
		e.rec, e.left = transition(e.rec, evLeft, cp.opt.MaxAttempts, "", time.Time{}), true
	}
	if ev != evSucceeded { // a success is done: no later request of the URL it ended at is its
		// The breaker's Retry requests the URL a throttle ended at; a user's
		// Retry of a redirect's target, not done, is this record's.
		if u := a.Request.URL.String(); ev == evThrottled || u != e.rec.URL {
			cp.fileUnder(u, e.rec.ID, ev == evThrottled)
		}
	}
	if ev == evFailed && e.rec.Attempts >= cp.opt.MaxAttempts {
		// Its last attempt, in an outage: parked, not dead (mu is held).
		if out, until := cp.circuitOutLocked(a.Domain); out {
			ev, retryAt = evFailedInOutage, until
			if retryAt.IsZero() {
				retryAt = cp.now()
			}
			retryAt = retryAt.UTC()
		}
	}
	was := e.rec.State
	cp.applyLocked(a.Request, e, ev, reason, retryAt)
	cp.live.take(a.Request)
	switch {
	case ev == evSucceeded:
		cp.succeeded(a.Domain, e)
	case ev == evFailed && e.rec.State == storage.Dead && was != storage.Dead:
		cp.rememberDead(a.Domain, e.rec.ID)
	}
	l.Unlock()
	if fails {
		cp.saveDomainLocked(a.Domain) // the window, or the Retry-After pause
	}
}

// eventOf is an attempt's event, with observe.StateOf's reason and time.
func eventOf(a observe.Attempt) (event, string, time.Time) {
	s, reason, until := observe.StateOf(a)
	return stateEvents[s], reason, until
}

// stateEvents is the checkpoint's event for each observe.URLState.
var stateEvents = [...]event{observe.Done: evSucceeded, observe.Gone: evGone, observe.Failed: evFailed,
	observe.ThrottledOut: evThrottledGaveUp, observe.Resent: evThrottled, observe.Parked: evRefused,
	observe.Cancelled: evCancelled, observe.Settled: evSettled}

// inFlightByDomain counts, per domain, the records a dead run left in flight.
func (cp *Checkpoint) inFlightByDomain() (map[string]int, error) {
	out := map[string]int{}
	if err := cp.flush(true); err != nil {
		return nil, err
	}
	err := cp.store.Scan(func(r storage.Record) error {
		if u, err := url.Parse(r.URL); err == nil {
			out[strings.ToLower(u.Host)]++
		}
		return nil
	}, storage.InFlight)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading the requests in flight at the last stop: %w", err)
	}
	return out, nil
}
