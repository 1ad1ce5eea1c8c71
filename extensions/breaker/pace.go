package breaker

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/rs/zerolog"
)

// Pacing is the user's ceiling for each domain's pace: the most requests in
// flight to one domain and the least time between two requests to it. The
// pace starts there; a 429 (or a 503 with Retry-After) halts the domain
// until Retry-After and multiplies the pace down (fewer in flight, a longer
// gap); a run of clean successes raises it step by step, never past these
// settings: additive increase, multiplicative decrease.
//
// Parallelism ≤ 0 means no limit of Breakwater's own (Colly's LimitRules
// still apply); MinGap ≤ 0 means no gap. Give the per-domain parallelism
// here rather than to one Colly LimitRule matching every host: that rule's
// slots are shared by all of them, so one slow or waiting domain holds up
// the rest.
//
// Backoff is the factor a throttle multiplies the gap by (default 2) and
// divides the in-flight limit by, once per throttle episode: answers to
// requests that left before the last slowdown do not slow the domain again.
// Recover is how many clean successes in a row earn one step back (default
// 10); Step is how much each step takes off the gap (default a tenth of the
// gap reached by the last throttle, at least 1 ms).
//
// MaxGap caps the gap a throttle can grow to (default 60 s, Scrapy
// AutoThrottle's MAX_DELAY). ThrottleHorizon ends sustained throttling: a
// domain that answered nothing but throttles for that long (default 5
// minutes) is held open like a tripped circuit, so its remaining URLs are
// refused and listed unfinished and the run ends tripped instead of waiting
// forever.
//
// Without Config.Pacing every field takes its default: no in-flight limit or
// gap of the user's, the throttle behaviour above. Whatever the pacing, a
// domain never has more requests in flight than its circuit could still
// stop: the failures that trip its profile's window, less the failures
// already in it.
type Pacing struct {
	Parallelism     int
	MinGap          time.Duration
	Backoff         float64
	Recover         int
	Step            time.Duration
	MaxGap          time.Duration
	ThrottleHorizon time.Duration
}

// Defaults for the Pacing fields whose zero value stands for a default.
const (
	DefaultMaxGap          = time.Minute
	DefaultThrottleHorizon = 5 * time.Minute
)

func (p Pacing) normalise() (Pacing, error) {
	if p.Backoff == 0 {
		p.Backoff = 2
	}
	if p.Recover == 0 {
		p.Recover = 10
	}
	if p.MaxGap == 0 {
		p.MaxGap = max(DefaultMaxGap, p.MinGap)
	}
	if p.ThrottleHorizon == 0 {
		p.ThrottleHorizon = DefaultThrottleHorizon
	}
	switch {
	case p.Backoff <= 1:
		return p, fmt.Errorf("breaker: Pacing.Backoff = %v: must be above 1 (2 halves the pace on a throttle)", p.Backoff)
	case p.Recover < 1:
		return p, fmt.Errorf("breaker: Pacing.Recover = %d: must be at least 1 success", p.Recover)
	case p.Step < 0:
		return p, fmt.Errorf("breaker: Pacing.Step = %v: must be 0 (automatic) or more", p.Step)
	case p.MaxGap < p.MinGap:
		return p, fmt.Errorf("breaker: Pacing.MaxGap = %v is below MinGap = %v: the gap could not grow at all", p.MaxGap, p.MinGap)
	case p.ThrottleHorizon < 0:
		return p, fmt.Errorf("breaker: Pacing.ThrottleHorizon = %v: must be 0 (default %v) or more", p.ThrottleHorizon, DefaultThrottleHorizon)
	}
	return p, nil
}

// minThrottleGap is the gap a first throttle imposes on a domain that had
// none: a starting point the multiplicative decrease grows from.
const minThrottleGap = 20 * time.Millisecond

// pace is one domain's current pace. Waiting happens at the gate, so a
// domain that waits never holds up requests to other domains.
//
// Besides the limit, room caps the requests in flight: the breaker passes
// how many more failures its circuit can take before it trips, so a request
// leaves only while, even if every request in flight failed, the circuit
// would still be there to stop the next one. That is what bounds the
// requests sent into a failing site to failuresToTrip whatever Colly's
// LimitRules do (their slots free before the outcome is known).
//
// Slots are handed over first in, first out: a freed slot goes to the
// longest waiter and wakes only it (waking every waiter on each release
// cost a crawl with a thousand queued requests per domain a third of its
// CPU). Time is reserved, as a token bucket does: each request that holds a
// slot takes the next start time and pushes it on by the gap.
type pace struct {
	user Pacing
	room func() int // most requests the circuit lets be in flight now
	clk  clock.Clock

	mu          sync.Mutex
	limit       int           // current in-flight cap; 0 = none
	gap         time.Duration // current least gap between request starts
	step        time.Duration // how much one recovery step takes off the gap
	inflight    int
	gateWaiters []*waiter         // waiting at the gate for a slot in flight, oldest first
	resWaiters  []*waiter         // waiting in OnRequest for a reservation, oldest first
	res         map[any]time.Time // slots reserved in OnRequest, until when
	next        time.Time         // earliest start of the next request
	halt        time.Time         // Retry-After: nothing before this
	clean       int               // clean successes since the last change
	episode     uint64            // slowdowns so far: a throttle slows the pace once per episode
	since       time.Time         // first throttle with no success since; zero when not throttled

	pauses    int
	pausedFor time.Duration

	recheck    *time.Timer // looks again while anybody waits; nil until somebody first did
	rechecking bool        // recheck is armed
}

func newPace(p Pacing, room func() int, clk clock.Clock) *pace {
	if room == nil {
		room = func() int { return math.MaxInt }
	}
	return &pace{user: p, room: room, clk: clock.OrSystem(clk), limit: max(p.Parallelism, 0), gap: max(p.MinGap, 0)}
}

// reserveFor is how long a slot reserved in OnRequest is kept for its
// request to reach the gate. A request aborted in between (by an OnRequest
// callback registered after the breaker's) never comes to claim it; the
// slot is then free again after this long.
const reserveFor = time.Second

// recheckEvery is how often the waiters look again by themselves, so a
// reservation that lapsed frees its slot even when nothing else happens.
const recheckEvery = 500 * time.Millisecond

// waiter is one request waiting: at the gate for a slot in flight, or in
// OnRequest for a reservation (key).
type waiter struct {
	ch  chan struct{}
	key any
}

// liveLocked is the number of reservations not lapsed.
func (p *pace) liveLocked(now time.Time) int {
	for k, until := range p.res {
		if !now.Before(until) {
			delete(p.res, k)
		}
	}
	return len(p.res)
}

// canSendLocked says whether one more request may leave now: what bounds
// the requests sent into a failing site counts only those in flight.
func (p *pace) canSendLocked() bool {
	return (p.limit == 0 || p.inflight < p.limit) && p.inflight < p.room()
}

// canReserveLocked says whether one more request may be let through to
// Colly's LimitRule: in flight and reserved together under the caps.
func (p *pace) canReserveLocked(now time.Time) bool {
	n := p.inflight + p.liveLocked(now)
	return (p.limit == 0 || n < p.limit) && n < p.room()
}

// reserve waits, before Colly's LimitRule, until the domain is not halted
// and has a slot for key, and reserves it; acquire at the gate claims it.
// A domain that must wait thus waits without holding any of the slots a
// LimitRule shares between domains. On a cancelled ctx it holds nothing.
func (p *pace) reserve(ctx context.Context, clk clock.Clock, key any) error {
	for {
		p.mu.Lock()
		now := clk.Now()
		halt := p.halt
		p.mu.Unlock()
		if !halt.After(now) {
			break
		}
		select {
		case <-clk.After(halt.Sub(now)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.mu.Lock()
	now := clk.Now()
	if len(p.resWaiters) == 0 && p.canReserveLocked(now) {
		p.reserveLocked(now, key)
		p.mu.Unlock()
		return nil
	}
	w := &waiter{ch: make(chan struct{}, 1), key: key}
	p.resWaiters = append(p.resWaiters, w)
	p.armRecheckLocked()
	p.mu.Unlock()
	return p.wait(ctx, clk, w, &p.resWaiters)
}

func (p *pace) reserveLocked(now time.Time, key any) {
	if p.res == nil {
		p.res = make(map[any]time.Time)
	}
	p.res[key] = now.Add(reserveFor)
}

// unreserve gives back key's reservation, if it holds one: the request is
// not going to claim it.
func (p *pace) unreserve(clk clock.Clock, key any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.res[key]; ok {
		delete(p.res, key)
		p.admitLocked(clk.Now())
	}
}

// wait waits for w to be granted from queue q. A lapsed reservation frees
// its slot without any event: the pace's recheck looks again now and then
// while anybody waits (see armRecheckLocked).
func (p *pace) wait(ctx context.Context, clk clock.Clock, w *waiter, q *[]*waiter) error {
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		if i := slices.Index(*q, w); i >= 0 {
			*q = slices.Delete(*q, i, i+1)
			p.mu.Unlock()
			return ctx.Err()
		}
		p.mu.Unlock()
		// Granted as we gave up: pass it on.
		if w.key != nil {
			p.unreserve(clk, w.key)
		} else {
			p.release()
		}
		return ctx.Err()
	}
}

// armRecheckLocked makes the pace look again for free slots recheckEvery
// from now, and every recheckEvery after that for as long as anybody
// waits: a reservation that lapsed frees its slot without any event. One
// timer per domain serves all its waiters (a ticker per waiter cost a
// crawl with a thousand requests queued per domain a wake-up and the
// domain's lock per waiter every tick).
func (p *pace) armRecheckLocked() {
	if p.rechecking {
		return
	}
	p.rechecking = true
	if p.recheck == nil {
		p.recheck = time.AfterFunc(recheckEvery, p.recheckNow)
		return
	}
	p.recheck.Reset(recheckEvery)
}

// recheckNow is the recheck timer's: it hands free slots on and stays
// armed while anybody still waits.
func (p *pace) recheckNow() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rechecking = false
	p.admitLocked(p.clk.Now())
	if len(p.gateWaiters) > 0 || len(p.resWaiters) > 0 {
		p.armRecheckLocked()
	}
}

// acquire waits until a request to the domain may start: a slot under the
// in-flight limit and the circuit's room (claiming the reservation key made
// in OnRequest, if any), then past the gap since the last start and past
// any halt. It returns the throttle episode the request leaves in and the
// requests in flight to the domain as it leaves, itself included. On a
// cancelled ctx it holds nothing.
func (p *pace) acquire(ctx context.Context, clk clock.Clock, key any) (episode uint64, inFlight int, err error) {
	p.mu.Lock()
	delete(p.res, key)
	if len(p.gateWaiters) == 0 && p.canSendLocked() {
		p.inflight++
		p.mu.Unlock()
	} else {
		w := &waiter{ch: make(chan struct{}, 1)}
		p.gateWaiters = append(p.gateWaiters, w)
		p.armRecheckLocked()
		p.mu.Unlock()
		if err := p.wait(ctx, clk, w, &p.gateWaiters); err != nil {
			return 0, 0, err
		}
	}
	for {
		p.mu.Lock()
		now := clk.Now()
		start := now
		if p.next.After(start) {
			start = p.next
		}
		if p.halt.After(start) {
			start = p.halt
		}
		if !start.After(now) {
			p.next = now.Add(p.gap)
			ep, n := p.episode, p.inflight
			p.mu.Unlock()
			return ep, n, nil
		}
		p.mu.Unlock()
		// Wait, then look again: a throttle may have halted the domain
		// meanwhile.
		select {
		case <-clk.After(start.Sub(now)):
		case <-ctx.Done():
			p.release()
			return 0, 0, ctx.Err()
		}
	}
}

// earliest is the soonest a request to the domain could start by the
// pause and the gap, whatever the slots in flight.
func (p *pace) earliest() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.halt.After(p.next) {
		return p.halt
	}
	return p.next
}

// release gives back an in-flight slot and hands the free slots on.
func (p *pace) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	p.admitLocked(p.clk.Now())
}

// admit hands free slots on after the circuit's room grew without a slot
// being released (a transition).
func (p *pace) admit() {
	p.mu.Lock()
	p.admitLocked(p.clk.Now())
	p.mu.Unlock()
}

// admitLocked hands free slots on, oldest first: to the requests waiting at
// the gate before those waiting in OnRequest, since those at the gate hold
// a LimitRule slot.
func (p *pace) admitLocked(now time.Time) {
	for len(p.gateWaiters) > 0 && p.canSendLocked() {
		w := p.gateWaiters[0]
		p.gateWaiters = p.gateWaiters[1:]
		p.inflight++
		w.ch <- struct{}{}
	}
	for len(p.resWaiters) > 0 && p.canReserveLocked(now) {
		w := p.resWaiters[0]
		p.resWaiters = p.resWaiters[1:]
		p.reserveLocked(now, w.key)
		w.ch <- struct{}{}
	}
}

// throttled halts the domain until now+wait and, once per throttle episode,
// slows it down: ep is the episode the throttled request left in, and an
// answer to a request that left before the last slowdown only extends the
// halt. It returns the new limit and gap, whether they changed, and whether
// the domain has now been throttled without a success for longer than the
// horizon.
func (p *pace) throttled(now time.Time, wait time.Duration, ep uint64) (limit int, gap time.Duration, changed, horizon bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until := now.Add(wait); until.After(p.halt) {
		if p.halt.Before(now) {
			p.pauses++
			p.pausedFor += wait
		} else {
			p.pausedFor += until.Sub(p.halt)
		}
		p.halt = until
	}
	p.clean = 0
	if p.since.IsZero() {
		p.since = now
	}
	horizon = p.user.ThrottleHorizon > 0 && now.Sub(p.since) >= p.user.ThrottleHorizon
	if ep != p.episode {
		return p.limit, p.gap, false, horizon // this episode already slowed the pace
	}
	p.episode++
	oldLimit, oldGap := p.limit, p.gap
	if p.limit == 0 {
		p.limit = max(p.inflight, 1)
	}
	p.limit = max(1, int(float64(p.limit)/p.user.Backoff))
	p.gap = min(max(time.Duration(float64(p.gap)*p.user.Backoff), minThrottleGap), max(p.user.MaxGap, minThrottleGap))
	p.step = p.user.Step
	if p.step == 0 {
		p.step = max(p.gap/10, time.Millisecond)
	}
	return p.limit, p.gap, p.limit != oldLimit || p.gap != oldGap, horizon
}

// succeeded counts a clean success; every Recover of them in a row take
// one step back towards the user's pace.
func (p *pace) succeeded() (limit int, gap time.Duration, changed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.since = time.Time{}
	if p.atUserPace() {
		return p.limit, p.gap, false
	}
	p.clean++
	if p.clean < p.user.Recover {
		return p.limit, p.gap, false
	}
	p.clean = 0
	if p.gap > p.user.MinGap {
		p.gap = max(p.gap-p.step, max(p.user.MinGap, 0))
	}
	if p.limit > 0 {
		if p.user.Parallelism > 0 && p.limit >= p.user.Parallelism {
			p.limit = p.user.Parallelism
		} else {
			p.limit++
			if p.user.Parallelism <= 0 && p.gap <= max(p.user.MinGap, 0) && p.limit > 64 {
				p.limit = 0 // back to no limit of our own
			}
		}
		p.admitLocked(p.clk.Now())
	}
	return p.limit, p.gap, true
}

func (p *pace) atUserPace() bool {
	return p.gap <= max(p.user.MinGap, 0) && (p.limit == max(p.user.Parallelism, 0))
}

// PaceStats is a domain's pace at one moment.
type PaceStats struct {
	Limit     int           `json:"limit"`         // in-flight cap, 0 = none of Breakwater's
	Gap       time.Duration `json:"gap_ns"`        // least time between request starts
	InFlight  int           `json:"in_flight"`     // requests between the gate and their outcome
	Pauses    int           `json:"pauses"`        // Retry-After halts taken
	PausedFor time.Duration `json:"paused_for_ns"` // time spent halted, in total
	HaltUntil time.Time     `json:"halt_until,omitzero"`
}

func (p *pace) stats(now time.Time) PaceStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := PaceStats{Limit: p.limit, Gap: p.gap, InFlight: p.inflight, Pauses: p.pauses, PausedFor: p.pausedFor}
	if p.halt.After(now) {
		s.HaltUntil = p.halt
	}
	return s
}

func logPace(l zerolog.Logger, domain, why string, limit int, gap time.Duration) {
	l.Info().Str("event", "pace_changed").Str("domain", domain).Str("why", why).
		Int("limit", limit).Float64("gap_ms", ms(gap)).
		Msgf("breaker: pace for %s now %d in flight, %v between requests (%s)", domain, limit, gap, why)
}
