package report

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/gocolly/colly/v2"
)

// DefaultBuckets is TimelineConfig.Buckets' default.
const DefaultBuckets = 240

// maxPauses is how many separate pauses a domain's series keeps; past it
// the two closest merge into one.
const maxPauses = 16

// TimelineConfig configures a Timeline. Its zero value is ready to use.
type TimelineConfig struct {
	// Clock stamps attempts and refusals; transitions carry the breaker's
	// time, so give the breaker's clock (breaker.Config.Clock). Default
	// clock.System.
	Clock clock.Clock
	// Buckets is how many time slices a domain's series holds at most:
	// when the run outgrows them, neighbours merge in pairs and each
	// slice covers twice the time. If ≤ 0, DefaultBuckets.
	Buckets int
	// Resolution is a slice's length at the start. If ≤ 0, 10 ms.
	Resolution time.Duration
}

// Timeline records, per domain and over time, the circuit's state, the
// requests and how they ended, the refusals, the trips and the
// Retry-After pauses, for the HTML report (Sources.Timeline). It follows
// a breaker as an observe.Observer: call Observe with the breaker before
// the crawl. Its memory is bounded per domain: at most Buckets slices of
// 40 bytes (a slice with nothing in it takes no room; 10 kB at most by
// default) and 16 pauses.
type Timeline struct {
	clock    clock.Clock
	buckets  int
	mu       sync.Mutex
	start    time.Time
	width    time.Duration // of one slice
	last     time.Time     // the latest event
	domains  map[string]*series
	observed observe.Subjects
}

// series is one domain's record.
type series struct {
	initial state    // the state before its first slice
	now     state    // the state displayed now
	blocked bool     // held for answering 401/403
	slices  []slice  // sorted by index; only slices with something in them
	pauses  []period // sorted, apart, at most maxPauses
}

// state is a circuit's state as drawn: a circuit.State, or held blocked.
type state uint8

const (
	closed state = iota
	open
	halfOpen
	blocked
)

var stateNames = [...]string{"closed", "open", "half-open", "blocked"}

func (s state) String() string { return stateNames[s] }

// worse ranks what a slice that held several states shows: blocked, then
// open, then half-open, then closed.
var worse = [...]int{closed: 0, halfOpen: 1, open: 2, blocked: 3}

// slice is what happened on a domain in one time slice.
type slice struct {
	index int
	// The attempts by how they ended: valid pages, failures (degraded
	// and invalid), 429s, the other answers (401, 403, 404, 410, other
	// 4xx); and the requests refused.
	ok, failed, throttled, other, refused uint32
	trips                                 uint32
	held                                  uint8 // a bit per state held during the slice, when moved
	end                                   state // the state at its end, when moved
	moved                                 bool  // the state changed during the slice
}

// period is a pause: from, until.
type period struct{ from, until time.Time }

// NewTimeline returns an empty Timeline whose time starts now, on the
// configured clock.
func NewTimeline(cfg TimelineConfig) *Timeline {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.System
	}
	t := &Timeline{clock: clk, buckets: cfg.Buckets, width: cfg.Resolution, domains: map[string]*series{}}
	if t.buckets <= 0 {
		t.buckets = DefaultBuckets
	}
	if t.width <= 0 {
		t.width = 10 * time.Millisecond
	}
	t.start = clk.Now()
	t.last = t.start
	return t
}

// Observe follows the breaker s: every attempt, refusal and transition.
// Again with the same subject it does nothing.
func (t *Timeline) Observe(s observe.Subject) error {
	if s == nil {
		return errors.New("report: Timeline.Observe(nil): pass the *breaker.Breaker")
	}
	if !t.observed.Add(s) {
		return nil
	}
	return s.Hook(observe.Hooks{OnAttempt: t.attempt, OnRefused: t.refused, OnTransition: t.transition})
}

// attempt records an attempt that came back, at the clock's time. An
// answer of Colly's cache and an attempt the crawler itself cut
// (circuit.Excluded) are not requests to the site and are not drawn.
func (t *Timeline) attempt(a observe.Attempt) {
	if a.Cached || a.Result.Class == circuit.Excluded || a.Domain == "" {
		return
	}
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.series(a.Domain, closed)
	s := t.slice(d, now)
	switch a.Result.Class {
	case circuit.Success:
		s.ok++
	case circuit.Degraded, circuit.Invalid:
		s.failed++
	case circuit.Throttled:
		s.throttled++
	default:
		s.other++
	}
	if !a.PausedUntil.IsZero() && a.PausedUntil.After(now) {
		d.pause(period{now, a.PausedUntil}, t.width)
	}
}

// refused records a request the breaker refused. A refusal because the
// domain is held for answering 401/403 starts its blocked band, which
// lasts the run.
func (t *Timeline) refused(_ *colly.Request, err *circuit.OpenError) {
	if err == nil || err.Key == "" {
		return
	}
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	first := closed
	if err.State == circuit.Open || err.State == circuit.HalfOpen {
		first = state(err.State) // a circuit restored open refuses before any transition
	}
	d := t.series(err.Key, first)
	s := t.slice(d, now)
	s.refused++
	if err.Blocked && !d.blocked {
		d.blocked = true
		d.move(s, blocked)
	}
}

// transition records a change of a circuit's state at its time.
func (t *Timeline) transition(tr circuit.Transition) {
	if tr.Key == "" || tr.From == tr.To {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.series(tr.Key, state(tr.From))
	s := t.slice(d, tr.At)
	if tr.To == circuit.Open {
		s.trips++
	}
	if !d.blocked {
		d.move(s, state(min(tr.To, circuit.HalfOpen)))
	}
}

// series returns the domain's series, made with the state it starts in.
func (t *Timeline) series(domain string, first state) *series {
	d := t.domains[domain]
	if d == nil {
		d = &series{initial: first, now: first}
		t.domains[domain] = d
	}
	return d
}

// slice returns d's slice holding the time at, made if need be; when at is
// past the last slice, every series merges its slices in pairs first.
func (t *Timeline) slice(d *series, at time.Time) *slice {
	if at.After(t.last) {
		t.last = at
	}
	i := t.index(at)
	for i >= t.buckets {
		t.coarsen()
		i = t.index(at)
	}
	j, found := slices.BinarySearchFunc(d.slices, i, func(s slice, i int) int { return s.index - i })
	if !found {
		d.slices = slices.Insert(d.slices, j, slice{index: i})
	}
	return &d.slices[j]
}

// index is the slice holding at; a time before the start is the first.
func (t *Timeline) index(at time.Time) int {
	if !at.After(t.start) {
		return 0
	}
	return int(at.Sub(t.start) / t.width)
}

// coarsen doubles the slices' length, merging neighbours in every series.
func (t *Timeline) coarsen() {
	t.width *= 2
	for _, d := range t.domains {
		out := d.slices[:0]
		for _, s := range d.slices {
			s.index /= 2
			if n := len(out); n > 0 && out[n-1].index == s.index {
				out[n-1].merge(s)
				continue
			}
			out = append(out, s)
		}
		d.slices = out
	}
}

// merge adds the later slice s to x.
func (x *slice) merge(s slice) {
	x.ok += s.ok
	x.failed += s.failed
	x.throttled += s.throttled
	x.other += s.other
	x.refused += s.refused
	x.trips += s.trips
	if s.moved {
		if !x.moved {
			x.held = 0
		}
		x.held |= s.held
		x.end, x.moved = s.end, true
	}
}

// move records that d's state became to during s.
func (d *series) move(s *slice, to state) {
	if !s.moved {
		s.held = 1 << d.now
	}
	s.held |= 1 << to
	s.end, s.moved = to, true
	d.now = to
}

// pause adds p to d's pauses, joining one it overlaps or nearly touches;
// past maxPauses the two closest pauses merge.
func (d *series) pause(p period, near time.Duration) {
	i, _ := slices.BinarySearchFunc(d.pauses, p.from, func(q period, at time.Time) int { return q.from.Compare(at) })
	d.pauses = slices.Insert(d.pauses, i, p)
	out := d.pauses[:1]
	for _, q := range d.pauses[1:] {
		if last := &out[len(out)-1]; !q.from.After(last.until.Add(near)) {
			if q.until.After(last.until) {
				last.until = q.until
			}
			continue
		}
		out = append(out, q)
	}
	d.pauses = out
	for len(d.pauses) > maxPauses {
		j := 0
		for k := 1; k < len(d.pauses)-1; k++ {
			if d.pauses[k+1].from.Sub(d.pauses[k].until) < d.pauses[j+1].from.Sub(d.pauses[j].until) {
				j = k
			}
		}
		d.pauses[j].until = d.pauses[j+1].until
		d.pauses = slices.Delete(d.pauses, j+1, j+2)
	}
}

// snapshot copies what t recorded so far, for a report to draw.
func (t *Timeline) snapshot() *Timeline {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &Timeline{start: t.start, last: t.last, width: t.width, domains: make(map[string]*series, len(t.domains))}
	for name, d := range t.domains {
		cp := *d
		cp.slices, cp.pauses = slices.Clone(d.slices), slices.Clone(d.pauses)
		c.domains[name] = &cp
	}
	return c
}
