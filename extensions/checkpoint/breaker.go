package checkpoint

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/internal/hostkey"
	"github.com/breakwater-crawl/breakwater/internal/observed"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
)

// Observe ties the checkpoint to a breaker (observe.Observer);
// breakwater.Use calls it before the crawl. From then on the breaker's
// classified outcome of every attempt decides the URL's state, a refusal
// parks the URL until the domain's RetryAt, and every circuit that opens
// or closes is saved at once, so a crash does not skip a cooldown.
//
// First it gives b back each domain's saved circuit: open until its saved
// RetryAt, on probation if that has passed, a closed one with the
// failures its window held (breaker.Breaker.Restore), so that a site
// still failing trips as fast as without the restart. A second call with
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
	if b, ok := s.(*breaker.Breaker); ok {
		return cp.restore(b) // a breaker of ours: its saved circuits come back
	}
	return nil
}

// restore attaches b and gives it back each domain's saved history.
func (cp *Checkpoint) restore(b *breaker.Breaker) error {
	cp.mu.Lock()
	cp.b = b
	saved := cp.openDomainsLocked(true)
	cp.unlock()
	now := cp.now()
	var errs []error
	// Requests in flight when the last run died may each have failed:
	// counted as failures in the restored window (never to a trip).
	suspect, err := cp.inFlightByDomain()
	if err != nil {
		errs = append(errs, err)
	}
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
		snap := breaker.DomainSnapshot{Domain: s.Domain, State: circuit.Closed, Trips: s.Trips,
			WindowLen: s.Window, WindowFailures: s.Failures, HaltUntil: s.HaltUntil}
		ev := cp.log.Info().Str("event", "breaker_restored").Str("domain", s.Domain).Int("trips", s.Trips)
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

// onTransition saves a circuit that opened, parking its domain's URLs dead
// of failures (outage.go), and forgets one that closed.
func (cp *Checkpoint) onTransition(t circuit.Transition) {
	cp.mu.Lock()
	defer cp.unlock()
	switch t.To {
	case circuit.Open:
		cp.reviveLocked(t.Key, t.RetryAt)
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

// saveBreakersLocked refreshes the saved states from the attached
// breaker's (a half-open one stays as saved when it opened).
func (cp *Checkpoint) saveBreakersLocked() {
	if cp.b == nil {
		return
	}
	for _, s := range cp.b.Snapshots() {
		cp.keepLocked(s)
	}
	cp.writeJSONLocked(keyBreakers, cp.saved)
}

// keepLocked sets what is saved of one domain's circuit and pause.
func (cp *Checkpoint) keepLocked(s breaker.DomainSnapshot) {
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

// saveDomainLocked saves and flushes the window of a domain that just
// failed or was told Retry-After: a kill before Close loses neither.
func (cp *Checkpoint) saveDomainLocked(domain string) {
	if cp.b == nil {
		return
	}
	if ss := cp.b.Snapshots(domain); len(ss) == 1 && ss[0].State == circuit.Closed {
		cp.keepLocked(ss[0])
		cp.writeJSONLocked(keyBreakers, cp.saved)
		// Now: each failure lost to a kill is one more request into a failing site.
		cp.failLocked(cp.store.Flush())
	}
}

// onRefused parks a request the breaker refused.
func (cp *Checkpoint) onRefused(r *colly.Request, err *circuit.OpenError) {
	cp.mu.Lock()
	defer cp.unlock()
	e := cp.entryLocked(r)
	if e == nil {
		return
	}
	cp.applyLocked(r, e, evRefused, err.Error(), err.RetryAt)
}

// onNotVisited keeps a URL Colly refused before any callback (handed to
// the breaker's NotVisited) pending, for the next run to fetch.
func (cp *Checkpoint) onNotVisited(r *colly.Request, _ error) {
	cp.mu.Lock()
	defer cp.unlock()
	e := cp.entryLocked(r)
	if e == nil {
		return
	}
	if e.rec.State == 0 || e.rec.State == storage.Pending {
		cp.applyLocked(r, e, evQueued, "", time.Time{})
	}
	delete(cp.entries, r)
}

// onOutcome records what an attempt that left came to, as the breaker
// classified it.
func (cp *Checkpoint) onOutcome(a observe.Attempt) {
	cp.mu.Lock()
	defer cp.unlock()
	e, ok := cp.entries[a.Request]
	if !ok {
		// A clone's request (Clone copies no callbacks; the breaker gates
		// at the shared transport): recorded as an attempt that left.
		if e = cp.entryLocked(a.Request); e == nil {
			return
		}
		cp.applyLocked(a.Request, e, evLeft, "", time.Time{})
	}
	ev, reason, retryAt := eventOf(a)
	switch u := a.Request.URL.String(); {
	case ev == evThrottled:
		// The breaker's Retry requests the URL it ended at: whose record is it.
		cp.retryOf[u] = e.rec.ID
	case ev != evSucceeded && u != e.rec.URL:
		// Ended at a redirect's target, not done: a user's Retry of it is this record's.
		if len(cp.redirects) >= maxResent {
			clear(cp.redirects)
		}
		cp.redirects[u] = e.rec.ID
	}
	if ev == evFailed && e.rec.Attempts >= cp.opt.MaxAttempts {
		// Its last attempt: parked, not dead, if the domain's circuit is
		// not closed (the outage explains the failure).
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
	delete(cp.entries, a.Request)
	switch {
	case ev == evSucceeded:
		cp.succeededLocked(a.Domain, e)
	case ev == evFailed && e.rec.State == storage.Dead && was != storage.Dead:
		cp.rememberDeadLocked(a.Domain, e.rec.ID)
	}
	if a.Result.Class.Failure() || a.Result.Class == circuit.Throttled {
		cp.saveDomainLocked(a.Domain) // the window, or the Retry-After pause
	}
}

// eventOf is the checkpoint's event for an attempt, with observed.StateOf's
// reason (LastError: it starts with the class, which dead.go reads) and time.
func eventOf(a observe.Attempt) (event, string, time.Time) {
	s, reason, until := observed.StateOf(a)
	return stateEvents[s], reason, until
}

// stateEvents is the checkpoint's event for each observed.URLState.
var stateEvents = [...]event{observed.Done: evSucceeded, observed.Gone: evGone, observed.Failed: evFailed,
	observed.ThrottledOut: evThrottledGaveUp, observed.Resent: evThrottled, observed.Parked: evRefused,
	observed.Cancelled: evCancelled, observed.Settled: evSettled}

// inFlightByDomain counts, per host, the records left in flight by a run
// that died (they are still in flight until Resume re-drives them).
func (cp *Checkpoint) inFlightByDomain() (map[string]int, error) {
	out := map[string]int{}
	err := cp.store.Scan(func(r storage.Record) error {
		if u, err := url.Parse(r.URL); err == nil {
			out[hostkey.Of(u.Host)]++
		}
		return nil
	}, storage.InFlight)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading the requests in flight at the last stop: %w", err)
	}
	return out, nil
}
