// Package pace is one domain's pace: its in-flight limit and gap, cut by
// throttles to just under the rate the site grants (estimate.go) and raised
// by clean successes, never past the user's Config.
package pace

import (
	"cmp"
	"context"
	"fmt"
	"github.com/breakwater-crawl/breakwater/observe"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/internal/idle"
)

// Config is the user's ceiling for each domain's pace: breaker.Pacing,
// whose doc and docs/pacing.md tell each field. Parallelism and MinGap ≤ 0
// are none; the defaults are Backoff 2, Recover 10, Step a tenth of the
// throttled gap (at least 1 ms), DefaultMaxGap, DefaultThrottleHorizon.
type Config struct {
	Parallelism     int
	MinGap          time.Duration
	Backoff         float64
	Recover         int
	Step            time.Duration
	MaxGap          time.Duration
	ThrottleHorizon time.Duration
	// Clock is the paces' time source (New sets it): kept here, shared,
	// not in each domain's Pace.
	Clock clock.Clock
}

// Defaults for the Config fields whose zero value stands for a default.
const (
	DefaultMaxGap          = time.Minute
	DefaultThrottleHorizon = 5 * time.Minute
)

// Normalise fills the defaults of p's zero fields and rejects bad values.
func (p Config) Normalise() (Config, error) {
	p.Backoff = cmp.Or(p.Backoff, 2)
	p.Recover = cmp.Or(p.Recover, 10)
	p.MaxGap = cmp.Or(p.MaxGap, max(DefaultMaxGap, p.MinGap))
	p.ThrottleHorizon = cmp.Or(p.ThrottleHorizon, DefaultThrottleHorizon)
	p.Clock = cmp.Or(p.Clock, clock.System)
	switch {
	case p.Backoff <= 1:
		return p, fmt.Errorf("Pacing.Backoff = %v: must be above 1 (2 halves the pace on a throttle)", p.Backoff)
	case p.Recover < 1:
		return p, fmt.Errorf("Pacing.Recover = %d: must be at least 1 success", p.Recover)
	case p.Step < 0:
		return p, fmt.Errorf("Pacing.Step = %v: must be 0 (automatic) or more", p.Step)
	case p.MaxGap < p.MinGap:
		return p, fmt.Errorf("Pacing.MaxGap = %v is below MinGap = %v: the gap could not grow at all", p.MaxGap, p.MinGap)
	case p.ThrottleHorizon < 0:
		return p, fmt.Errorf("Pacing.ThrottleHorizon = %v: must be 0 (default %v) or more", p.ThrottleHorizon, DefaultThrottleHorizon)
	}
	return p, nil
}

const (
	minThrottleGap = 20 * time.Millisecond  // the gap a first throttle gives a domain that had none
	reserveFor     = time.Second            // how long a reservation waits for its request at the gate
	recheckEvery   = 500 * time.Millisecond // how often waiters look again, for lapsed reservations
)

// Pace is one domain's current pace. Besides the limit, the circuit's room
// (the failures it takes before it trips) caps the requests in flight.
type Pace struct {
	user *Config // shared by the domains until RaiseMinGap gives it its own; its Clock is the pace's
	room Room    // most requests the circuit lets be in flight now

	mu        sync.Mutex
	limit     int32 // current in-flight cap; 0 = none
	inflight  int32
	clean     int32         // clean successes since the last change
	pauses    int32         // Retry-After pauses taken
	gap       time.Duration // current least gap between request starts
	res       []reservation // slots reserved in OnRequest (a small array, kept: one a request)
	next      stamp         // earliest start of the next request
	halt      stamp         // Retry-After: nothing before this
	pausedFor time.Duration
	// Until the pace is first throttled, waited for or told a quota, the
	// rate estimate's first answer and count of answers (estimator.first,
	// n) are all it learns; *cold holds the rest, made then (coldLocked).
	first int64 // unix nanos; 0: none yet
	n     int32
	// episode is the slowdowns so far: a throttle slows the pace once per
	// episode. 32 bits beside n, not 64 (a Pace in 128 bytes, not 144):
	// it would take 2³² slowdowns, each a 429, to come round.
	episode uint32
	*cold
}

// cold is what a pace holds once it was throttled, waited for or told a
// quota: most domains of a broad crawl never are, and hold none of it.
type cold struct {
	step             time.Duration // how much one recovery step takes off the gap
	gateWaiters      []*waiter     // at the gate, for a slot in flight; oldest first, as below
	transportWaiters []*waiter     // first seen at the transport, for the circuit's room
	resWaiters       []*waiter     // in OnRequest, for a reservation
	preRamp          time.Duration // the gap before the rate estimate's ramp began
	since            time.Time     // first throttle with no success since; zero when not throttled
	est              estimator     // the rate the site grants, learnt from its throttles
	quotaGap         time.Duration // the gap the site's rate-limit headers ask for (Advertised)
	quotaUntil       time.Time     // until when quotaGap holds: the quota's reset
	recheck          *time.Timer   // looks again while anybody waits; nil until somebody first did
	rechecking       bool          // recheck is armed
}

// coldLocked returns p's cold part, made now if it was not: the estimate
// carries on from the first answer and count the pace kept until then.
func (p *Pace) coldLocked() *cold {
	if p.cold == nil {
		p.cold = &cold{}
		if p.first != 0 {
			p.est.first = time.Unix(0, p.first)
		}
		p.est.n = int(p.n)
	}
	return p.cold
}

// waiters is how many wait at the gate (or, atTransport, at the
// transport) and in OnRequest.
func (p *Pace) waiters(atTransport bool) (slot, reservation int) {
	if p.cold == nil {
		return 0, 0
	}
	if atTransport {
		return len(p.transportWaiters), len(p.resWaiters)
	}
	return len(p.gateWaiters), len(p.resWaiters)
}

// New returns a pace starting at p's ceiling (p normalised, shared by the
// paces it is given to, never written); room says how many requests the
// circuit lets be in flight now.
func New(p *Config, room Room) *Pace {
	if p.Clock == nil { // not made by Normalise
		own := *p
		own.Clock, p = clock.System, &own
	}
	return &Pace{user: p, room: room, limit: clamp32(max(p.Parallelism, 0)), gap: max(p.MinGap, 0)}
}

// Room says how many requests the circuit lets be in flight now.
type Room interface{ Room() int }

// RoomFunc is a func as a Room.
type RoomFunc func() int

// Room calls f.
func (f RoomFunc) Room() int { return f() }

// clamp32 is n as an int32, held within its range.
func clamp32(n int) int32 { return int32(min(max(n, math.MinInt32), math.MaxInt32)) }

// waiter is one request waiting for a slot, or for a reservation (key).
type waiter struct {
	ch  chan struct{}
	key any
}

// reservation is a slot reserved in OnRequest for key, until a time
// (unix nanoseconds). A domain holds at most its limit of them: a slice
// is smaller than a map, and nil once they are gone.
type reservation struct {
	key   any
	until int64
}

// liveLocked is the number of reservations not lapsed.
func (p *Pace) liveLocked(now time.Time) int {
	if len(p.res) > 0 {
		n := now.UnixNano()
		p.res = slices.DeleteFunc(p.res, func(r reservation) bool { return n >= r.until })
	}
	return len(p.res)
}

// unreserveLocked drops key's reservation and reports whether it held one.
func (p *Pace) unreserveLocked(key any) bool {
	for i := range p.res {
		if p.res[i].key == key {
			p.res = slices.Delete(p.res, i, i+1) // its array stays for the next: a reservation a request
			return true
		}
	}
	return false
}

// roomLocked says whether the circuit's room takes one more request.
func (p *Pace) roomLocked() bool { return int(p.inflight) < p.room.Room() }

func (p *Pace) canSendLocked() bool {
	return (p.limit == 0 || p.inflight < p.limit) && p.roomLocked()
}

func (p *Pace) canReserveLocked(now time.Time) bool {
	n := int(p.inflight) + p.liveLocked(now)
	return (p.limit == 0 || n < int(p.limit)) && n < p.room.Room()
}

// Reserve waits, before Colly's LimitRule, until the domain is not halted
// and has a slot for key, and reserves it for Acquire. On a cancelled ctx
// it holds nothing.
func (p *Pace) Reserve(ctx context.Context, key any) error {
	if err := p.WaitHalt(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	now := p.user.Clock.Now()
	if _, waiting := p.waiters(false); waiting == 0 && p.canReserveLocked(now) {
		p.reserveLocked(now, key)
		p.mu.Unlock()
		return nil
	}
	return p.waitLocked(ctx, &p.coldLocked().resWaiters, key)
}

func (p *Pace) reserveLocked(now time.Time, key any) {
	until := now.Add(reserveFor).UnixNano()
	for i := range p.res {
		if p.res[i].key == key {
			p.res[i].until = until
			return
		}
	}
	p.res = append(p.res, reservation{key, until})
}

// Unreserve gives back key's reservation, if it holds one.
func (p *Pace) Unreserve(key any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unreserveLocked(key) {
		p.admitLocked(p.user.Clock.Now())
	}
}

// waitLocked queues a waiter for key on q, unlocks p.mu and waits its turn.
func (p *Pace) waitLocked(ctx context.Context, q *[]*waiter, key any) error {
	w := &waiter{ch: make(chan struct{}, 1), key: key}
	*q = append(*q, w)
	p.armRecheckLocked()
	p.mu.Unlock()
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
			p.Unreserve(w.key)
		} else {
			p.Release()
		}
		return ctx.Err()
	}
}

// armRecheckLocked makes the pace look again for free slots every
// recheckEvery while anybody waits: one timer per domain, not per waiter.
func (p *Pace) armRecheckLocked() {
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

// recheckNow hands free slots on and re-arms while anybody waits.
func (p *Pace) recheckNow() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rechecking = false
	p.admitLocked(p.user.Clock.Now())
	if len(p.gateWaiters) > 0 || len(p.transportWaiters) > 0 || len(p.resWaiters) > 0 {
		p.armRecheckLocked()
	}
}

// AcquireLending waits for a slot (claiming key's reservation, if any),
// then for the gap and any halt. It returns the throttle episode the
// request leaves in and the requests in flight, itself included. On a
// cancelled ctx it holds nothing. A request that holds a slot of something
// shared while it waits (a LimitRule's) gives lend (nil: none): if it must
// wait, lend is called first, and the function it returns (nil: none) once
// the wait is over, before AcquireLending returns, whatever the outcome.
func (p *Pace) AcquireLending(ctx context.Context, key any, lend func() (retake func())) (episode uint64, inFlight int, err error) {
	return p.acquire(ctx, ctx, key, false, lend)
}

// AcquireAtTransport is Acquire for a request first seen at the transport,
// whose wait runs on the client's timeout: it takes a slot while the
// circuit's room allows, over the limit and ahead of the queue. It waits
// for the slot and the gap until slotCtx ends (nil: ctx), for a halt until
// ctx does. lend is as for AcquireLending (nil: nothing to lend).
func (p *Pace) AcquireAtTransport(ctx, slotCtx context.Context, lend func() (retake func())) (episode uint64, inFlight int, err error) {
	if slotCtx == nil {
		slotCtx = ctx
	}
	return p.acquire(ctx, slotCtx, nil, true, lend)
}

func (p *Pace) acquire(ctx, slotCtx context.Context, key any, atTransport bool, lend func() func()) (episode uint64, inFlight int, err error) {
	var retake func()
	defer func() {
		if retake != nil {
			retake()
		}
	}()
	lendOnce := func() {
		if lend != nil {
			retake, lend = lend(), nil
		}
	}
	p.mu.Lock()
	p.unreserveLocked(key)
	free := p.canSendLocked
	if atTransport {
		free = p.roomLocked
	}
	if waiting, _ := p.waiters(atTransport); waiting == 0 && free() {
		p.inflight++
		p.mu.Unlock()
	} else {
		c := p.coldLocked()
		q := &c.gateWaiters
		if atTransport {
			q = &c.transportWaiters
		}
		lendOnce()
		if err := p.waitLocked(slotCtx, q, nil); err != nil {
			return 0, 0, err
		}
	}
	for {
		p.mu.Lock()
		now, start := p.user.Clock.Now(), p.earliestLocked()
		if !start.After(now) {
			p.next = stampOf(now.Add(p.gapLocked(now)))
			ep, n := uint64(p.episode), int(p.inflight)
			p.mu.Unlock()
			return ep, n, nil
		}
		wctx := slotCtx
		if p.halt.t().After(now) {
			wctx = ctx
		}
		p.mu.Unlock()
		lendOnce()
		// Look again after: a throttle may have halted the domain meanwhile.
		select {
		case <-p.user.Clock.After(start.Sub(now)):
		case <-wctx.Done():
			p.Release()
			return 0, 0, ctx.Err()
		}
	}
}

// WaitHalt waits until no Retry-After halts the domain.
func (p *Pace) WaitHalt(ctx context.Context) error {
	for {
		p.mu.Lock()
		now, halt := p.user.Clock.Now(), p.halt.t()
		p.mu.Unlock()
		if !halt.After(now) {
			return nil
		}
		select {
		case <-p.user.Clock.After(halt.Sub(now)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Earliest is the soonest a request could start by the halt and the gap.
func (p *Pace) Earliest() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.earliestLocked()
}

func (p *Pace) earliestLocked() time.Time { return later(p.halt.t(), p.next.t()) }

// A stamp is a time in unix nanoseconds, 0 for none: 8 bytes where a
// time.Time takes 24 (a pace keeps two). It drops the monotonic reading:
// the pace compares it with the wall clock.
type stamp int64

func stampOf(t time.Time) stamp {
	if t.IsZero() {
		return 0
	}
	return stamp(t.UnixNano())
}

// t is s as a time; the zero time for 0.
func (s stamp) t() time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(s))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Release gives back an in-flight slot and hands the free slots on.
func (p *Pace) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	p.admitLocked(p.user.Clock.Now())
}

// Admit hands free slots on after the circuit's room grew.
func (p *Pace) Admit() {
	p.mu.Lock()
	p.admitLocked(p.user.Clock.Now())
	p.mu.Unlock()
}

// admitLocked hands free slots on, oldest first, to OnRequest's waiters
// last: the others hold a LimitRule slot.
func (p *Pace) admitLocked(now time.Time) {
	if p.cold == nil {
		return // nobody ever waited
	}
	for len(p.transportWaiters) > 0 && p.roomLocked() {
		p.inflight++
		wake(&p.transportWaiters)
	}
	for len(p.gateWaiters) > 0 && p.canSendLocked() {
		p.inflight++
		wake(&p.gateWaiters)
	}
	for len(p.resWaiters) > 0 && p.canReserveLocked(now) {
		p.reserveLocked(now, p.resWaiters[0].key)
		wake(&p.resWaiters)
	}
}

// wake lets the oldest waiter of q go.
func wake(q *[]*waiter) {
	(*q)[0].ch <- struct{}{}
	if *q = (*q)[1:]; len(*q) == 0 {
		*q = nil // its array goes with the last waiter
	}
}

// Throttled halts the domain until now+wait and slows it down if ep, the
// episode the throttled request left in, is the current one: to the rate
// learnt from the answers since the last throttle, or ramping from the
// first run's, or, with nothing learnt, by Backoff. It returns
// the limit and gap, whether they changed, and whether the domain has been
// throttled without a success for the horizon.
func (p *Pace) Throttled(now time.Time, wait time.Duration, ep uint64) (limit int, gap time.Duration, changed, horizon bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until := now.Add(wait); until.After(p.halt.t()) {
		if p.halt.t().Before(now) {
			p.pauses++
			p.halt = stampOf(now)
		}
		p.pausedFor += until.Sub(p.halt.t())
		p.halt = stampOf(until)
	}
	p.clean = 0
	p.coldLocked()
	if p.since.IsZero() {
		p.since = now
	}
	horizon = p.user.ThrottleHorizon > 0 && now.Sub(p.since) >= p.user.ThrottleHorizon
	if ep != uint64(p.episode) {
		return int(p.limit), p.gap, false, horizon // this episode already slowed the pace
	}
	p.episode++
	oldLimit, oldGap := p.limit, p.gap
	if p.limit == 0 {
		p.limit = max(p.inflight, 1)
	}
	p.limit = max(1, int32(float64(p.limit)/p.user.Backoff))
	wasRamping := p.est.ramping
	rate, rampFrom := p.est.throttled(now, p.halt.t(), p.user.Backoff)
	switch {
	case rate > 0:
		p.gap = p.rateGapLocked(rate)
	case rampFrom > 0:
		p.preRamp = p.gap
		p.gap = p.clampGapLocked(max(time.Duration(float64(time.Second)/rampFrom), minThrottleGap))
	default:
		base := p.gap
		if wasRamping {
			// A ramp that learnt nothing (no answer between its 429s: the
			// site was still throttling, whatever its rate) is not a pace
			// the site asked for: slow down from where the ramp began.
			base = p.preRamp
		}
		p.gap = min(max(time.Duration(float64(base)*p.user.Backoff), minThrottleGap), max(p.user.MaxGap, minThrottleGap))
	}
	p.step = cmp.Or(p.user.Step, max(p.gap/10, time.Millisecond))
	return int(p.limit), p.gap, p.limit != oldLimit || p.gap != oldGap, horizon
}

// clampGapLocked keeps gap between the user's MinGap and MaxGap.
func (p *Pace) clampGapLocked(gap time.Duration) time.Duration {
	return min(max(gap, p.user.MinGap, 0), p.user.MaxGap)
}

// rateGapLocked is the gap that holds just under rate, within the user's
// bounds; at the user's MinGap the estimate is let go.
func (p *Pace) rateGapLocked(rate float64) time.Duration {
	gap := p.clampGapLocked(gapFor(rate))
	if gap <= max(p.user.MinGap, 0) {
		p.est.rate = 0 // the site grants the user's pace: nothing to hold
	}
	return gap
}

// Accepted counts an answer of the domain's that was not a throttle (any
// status: the site spent its allowance on it), for the rate estimate; ep
// is the throttle episode its request left in (Acquire's). An answer to a
// request that left before the last slowdown was granted before the site
// said no: it does not count.
func (p *Pace) Accepted(now time.Time, ep uint64) {
	p.mu.Lock()
	switch {
	case p.cold == nil: // never throttled: the estimate's first answer and count
		if p.first == 0 {
			p.first = now.UnixNano()
		}
		if p.n < math.MaxInt32 {
			p.n++
		}
	case ep == uint64(p.episode):
		p.est.accepted(now, p.gap)
		if p.est.ramping {
			// Any answer the site granted speeds the ramp up, a 404 as
			// much as a page: a crawl of missing pages must not stay at
			// the ramp's first pace.
			p.gap = p.clampGapLocked(time.Duration(float64(p.gap) / p.est.rampFactor()))
			if p.gap <= max(p.user.MinGap, 0) {
				p.est.ramping = false
			}
		}
	case ep == uint64(p.episode)-1:
		if p.episode == 1 { // granted before the first 429: the first run's
			p.est.firstRun++
		}
	}
	p.mu.Unlock()
}

// Succeeded counts a clean success: it probes a learnt rate upward now
// and then (Accepted speeds a ramp up), and every Recover of them in a row take one
// step back towards the user's pace (the gap's only with nothing learnt).
func (p *Pace) Succeeded() (limit int, gap time.Duration, changed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cold != nil {
		p.since = time.Time{}
	}
	if p.atUserPace() {
		return int(p.limit), p.gap, false
	}
	p.coldLocked() // off the user's pace: throttled before
	oldLimit, oldGap := p.limit, p.gap
	learnt := p.est.rate > 0 || p.est.ramping
	if f := p.est.succeeded(p.user.Recover); f > 1 { // 1 unless a rate is learnt
		p.gap = p.rateGapLocked(p.est.rate * f)
		if p.est.rate > 0 {
			p.est.rate *= f
		}
	}
	p.clean++
	if int(p.clean) < p.user.Recover {
		return int(p.limit), p.gap, p.gap != oldGap
	}
	p.clean = 0
	if !learnt && p.gap > p.user.MinGap {
		p.gap = max(p.gap-p.step, max(p.user.MinGap, 0))
	}
	if p.limit > 0 {
		if par := clamp32(p.user.Parallelism); par > 0 && p.limit >= par {
			p.limit = par
		} else {
			p.limit++
			if p.user.Parallelism <= 0 && p.gap <= max(p.user.MinGap, 0) && p.limit > 64 {
				p.limit = 0 // back to no limit of our own
			}
		}
		p.admitLocked(p.user.Clock.Now())
	}
	return int(p.limit), p.gap, p.limit != oldLimit || p.gap != oldGap
}

func (p *Pace) atUserPace() bool {
	return p.gap <= max(p.user.MinGap, 0) && (p.limit == clamp32(max(p.user.Parallelism, 0)))
}

// Stats is the pace at a moment (observe.PaceStats).
type Stats = observe.PaceStats

// Stats returns the pace at now.
func (p *Pace) Stats(now time.Time) Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{Limit: int(p.limit), Gap: p.gap, InFlight: int(p.inflight), Pauses: int(p.pauses), PausedFor: p.pausedFor}
	if p.halt.t().After(now) {
		s.HaltUntil = p.halt.t()
	}
	return s
}

// Quiet writes into r the pause counts a compacted domain keeps, and
// reports whether the pace holds nothing else worth keeping at now.
func (p *Pace) Quiet(now time.Time, r *idle.Record) (still bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.Pauses, r.PausedFor = int64(p.pauses), int64(p.pausedFor)
	if p.cold != nil && (len(p.gateWaiters) > 0 || len(p.transportWaiters) > 0 || len(p.resWaiters) > 0 || !p.since.IsZero()) {
		return false
	}
	return p.inflight == 0 && p.liveLocked(now) == 0 && !p.halt.t().After(now) && !p.next.t().After(now) && p.atUserPace()
}

// Revive gives a new pace the pause counts r kept of the domain it continues.
func (p *Pace) Revive(r *idle.Record) {
	p.mu.Lock()
	p.pauses, p.pausedFor = int32(min(r.Pauses, math.MaxInt32)), time.Duration(r.PausedFor)
	p.mu.Unlock()
}

// HaltUntil halts the domain until t, if not halted longer already.
func (p *Pace) HaltUntil(t time.Time) {
	p.mu.Lock()
	p.halt = stampOf(later(t, p.halt.t()))
	p.mu.Unlock()
}

// RaiseMinGap raises the user's least gap to gap (robots.txt's Crawl-delay).
func (p *Pace) RaiseMinGap(gap time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if gap <= p.user.MinGap {
		return
	}
	own := *p.user // the shared Config is never written
	own.MinGap, own.MaxGap = gap, max(own.MaxGap, gap)
	p.user = &own
	p.gap = max(p.gap, gap)
}

// ParseRetryAfter reads a Retry-After header value, delay-seconds or an
// HTTP-date (RFC 9110 §10.2.3): how long to wait from now, and whether the
// value was usable (not garbage, negative or in the past).
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		const maxSecs = int64(365 * 24 * 3600) // no overflow on absurd values
		return time.Duration(min(secs, maxSecs)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		// Lenient: servers do send RFC 1123 with a zone other than GMT.
		if t, err = time.Parse(time.RFC1123, v); err != nil {
			t, err = time.Parse(time.RFC1123Z, v)
		}
	}
	if d := t.Sub(now); err == nil && d > 0 {
		return d, true
	}
	return 0, false
}
