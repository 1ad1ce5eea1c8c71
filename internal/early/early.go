// Package early is a domain's early warnings: a rolling record of its
// latest outcomes that, unlike the circuit's window, no transition clears,
// and what it reveals before the window's failure rate does — slow calls,
// a latency slope, the trip streak behind cooldown growth, and the
// adaptive timeout. The breaker keeps one Tracker per domain and acts on
// the Signals each outcome returns.
package early

import (
	"slices"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/window"
)

// Settings are the profile's fields the tracker reads (see
// breaker.Profile for each).
type Settings struct {
	WindowSize      int
	SlowCall        time.Duration
	SlowCallRate    float64
	SlopeMultiple   float64
	SlopeFloor      time.Duration
	TimeoutMultiple float64
	TimeoutAfter    int
	TimeoutFloor    time.Duration
}

// Tracker is a domain's rolling record of its latest outcomes, and the
// early-warning state computed from it: slow calls, the latency slope, the trip streak behind cooldown growth, and the
// adaptive timeout. Unlike the circuit's window its record is never cleared
// by a transition, so it describes the site, not the breaker. One lock, one
// call per outcome.
type Tracker struct {
	// The fields every outcome writes come first, together: on a broad
	// crawl a domain's tracker is seldom in the CPU's cache, and each line
	// an outcome writes is a miss (or, when two goroutines record for the
	// domain at once, a line taken from the other core).
	win          window.Window[circuit.Result] // latest counted outcomes: Stats
	slowNext     int
	slowCount    int
	latNext      int
	sinceSlope   int
	successes    int
	healthyRun   int // successes in a row while closed
	sinceTimeout int
	slowN        int
	latN         int

	mu  *sync.Mutex // &own, or the caller's (NewGuarded)
	own sync.Mutex

	// slow holds the slow flags of the latest counted outcomes (SlowCall
	// rule). While slowCount is 0 every flag in it is false, so an
	// outcome that is not slow need not read or write it.
	slow     []bool
	slowNeed int

	lat        []time.Duration // latencies of the latest successes (slope)
	scratch    []time.Duration
	baseline   time.Duration
	baseFlight int // the most requests in flight a success before the baseline left with (0: not known)
	degrading  bool

	streak int // trips since the last healthy stretch

	lats []time.Duration // scratch for the timeout's percentile

	p Settings
}

// slopeSamples is how many of the latest successes the slope's rolling
// median looks at: enough to ignore one slow page, few enough to see a
// climb within a handful of requests.
func slopeSamples(p Settings) int { return min(max(5, p.WindowSize/2), 20) }

// slopeEvery is how often (in successes) the slope is evaluated: a sort of
// a few latencies, kept off most of the hot path.
const slopeEvery = 4

// timeoutEvery is how often (in successes) the adaptive timeout is
// recomputed from the tracker's window (a sort of up to its size).
const timeoutEvery = 100

// New returns the tracker of a domain with settings p, its record size
// outcomes long.
func New(size int, p Settings) *Tracker { return NewGuarded(size, p, nil) }

// NewGuarded is New for a caller that guards the tracker and state of its
// own (a circuit.Memory made with NewMemory and a mutex) with one mutex, mu:
// the tracker locks mu, and the caller, holding mu, observes with
// ObserveLocked. A nil mu is New's own lock.
func NewGuarded(size int, p Settings, mu *sync.Mutex) *Tracker {
	// The record's failures are never asked for (Stats counts them from
	// the outcomes): a window that does not count them does not read the
	// outcome each record replaces.
	t := &Tracker{p: p, win: window.New[circuit.Result](size, nil), mu: mu}
	if t.mu == nil {
		t.mu = &t.own
	}
	if p.SlowCall > 0 {
		t.slow = make([]bool, p.WindowSize)
		t.slowNeed = circuit.Settings{WindowSize: p.WindowSize, FailureThreshold: p.SlowCallRate}.FailuresToTrip()
	}
	if p.SlopeMultiple > 0 {
		k := slopeSamples(p)
		t.lat = make([]time.Duration, k)
		t.scratch = make([]time.Duration, k)
	}
	return t
}

// Signals is what one outcome revealed.
type Signals struct {
	SlowTrip  bool    // a full window of slow calls at or above the rate
	SlowShare float64 // their share
	Slope     int     // +1 the median climbed past the slope, -1 it came back, 0 no news
	Median    time.Duration
	Baseline  time.Duration
	Healthy   bool          // a healthy stretch ended: one trip off the streak
	Timeout   time.Duration // a new adaptive timeout, if > 0
}

// Observe records one outcome and says what it revealed. inFlight is how
// many requests to the domain were in flight as its request left, itself
// included (0: not known).
func (t *Tracker) Observe(o circuit.Result, inFlight int) Signals {
	t.mu.Lock()
	s := t.ObserveLocked(o, inFlight)
	t.mu.Unlock()
	return s
}

// ObserveLocked is Observe for a caller that holds the tracker's mutex
// (NewGuarded).
func (t *Tracker) ObserveLocked(o circuit.Result, inFlight int) (s Signals) {
	if !o.Class.Counted() {
		return s
	}
	t.win.Add(o)
	success := o.Class == circuit.Success

	if t.slow != nil {
		isSlow := success && o.Latency > t.p.SlowCall
		full := t.slowN == len(t.slow)
		if !full {
			t.slowN++
		}
		if isSlow || t.slowCount > 0 { // else the flag it replaces is false, as it is
			if full && t.slow[t.slowNext] {
				t.slowCount--
			}
			t.slow[t.slowNext] = isSlow
			if isSlow {
				t.slowCount++
			}
		}
		if t.slowNext++; t.slowNext == len(t.slow) {
			t.slowNext = 0
		}
		if t.slowN == len(t.slow) && t.slowCount >= t.slowNeed {
			s.SlowTrip = true
			s.SlowShare = float64(t.slowCount) / float64(t.slowN)
		}
	}

	if !success {
		t.healthyRun = 0
		return s
	}
	t.successes++
	t.healthyRun++
	if t.healthyRun >= t.p.WindowSize {
		t.healthyRun = 0
		if t.streak > 0 {
			t.streak--
			s.Healthy = true
		}
	}

	if t.lat != nil && t.slopeEvidenceLocked(inFlight) {
		t.lat[t.latNext] = o.Latency
		t.latNext = (t.latNext + 1) % len(t.lat)
		if t.latN < len(t.lat) {
			t.latN++ // not written once full: an unchanged line is not taken from another core
		}
		t.sinceSlope++
		switch {
		case t.baseline == 0 && t.successes >= t.p.WindowSize:
			t.baseline = t.successMedianLocked()
		case t.baseline > 0 && t.latN == len(t.lat) && t.sinceSlope >= slopeEvery:
			t.sinceSlope = 0
			s.Slope, s.Median, s.Baseline = t.slopeLocked()
		}
	}

	if t.p.TimeoutMultiple > 0 && t.successes >= t.p.TimeoutAfter {
		t.sinceTimeout++
		if t.successes == t.p.TimeoutAfter || t.sinceTimeout >= timeoutEvery {
			t.sinceTimeout = 0
			s.Timeout = t.timeoutLocked()
		}
	}
	return s
}

// slopeEvidenceLocked says whether a success whose request left with
// inFlight requests in flight (itself included) tells anything about the
// slope. Until the baseline is taken every success does, and the baseline
// remembers the most requests in flight any of them left with. After it,
// one that left with more in flight than that does not: its latency
// includes the queue the client made itself (its connection pool, its CPU,
// its share of the site's attention) when it sent more at once than the
// baseline ever saw, which a site slowing down for every client does not
// need to explain. A site that slows down while the client keeps to the
// concurrency its baseline was taken at still shows on the slope. When
// either count is unknown (a ticket from Allow), the latency counts.
func (t *Tracker) slopeEvidenceLocked(inFlight int) bool {
	if t.baseline == 0 {
		t.baseFlight = max(t.baseFlight, inFlight)
		return true
	}
	return inFlight == 0 || t.baseFlight == 0 || inFlight <= t.baseFlight
}

// slopeLocked compares the rolling median of the latest successes with the
// baseline. A faster stretch lowers the baseline; a climb past the
// multiple (and the floor) starts a degrading episode, which ends when the
// median comes back under it.
func (t *Tracker) slopeLocked() (change int, median, baseline time.Duration) {
	copy(t.scratch, t.lat)
	slices.Sort(t.scratch)
	median = t.scratch[len(t.scratch)/2]
	if median < t.baseline {
		t.baseline = median
	}
	limit := max(time.Duration(float64(t.baseline)*t.p.SlopeMultiple), t.baseline+t.p.SlopeFloor)
	switch {
	case !t.degrading && median > limit:
		t.degrading = true
		change = +1
	case t.degrading && median <= limit:
		t.degrading = false
		change = -1
	}
	return change, median, t.baseline
}

// successMedianLocked is the median latency of the successes in the window.
func (t *Tracker) successMedianLocked() time.Duration {
	return circuit.MedianLatency(t.win.Outcomes())
}

// timeoutLocked is TimeoutMultiple × the p95 of the window's successes,
// never under TimeoutFloor.
func (t *Tracker) timeoutLocked() time.Duration {
	lats := t.lats[:0]
	for _, o := range t.win.Buf[:t.win.N] { // order does not matter here
		if o.Class == circuit.Success {
			lats = append(lats, o.Latency)
		}
	}
	t.lats = lats
	if len(lats) == 0 {
		return 0
	}
	slices.Sort(lats)
	p95 := lats[min(len(lats)-1, len(lats)*95/100)]
	return max(time.Duration(float64(p95)*t.p.TimeoutMultiple), t.p.TimeoutFloor)
}

// Transitioned clears what is judged per window, as the circuit clears its
// own, and, for a trip, adds to the streak and returns it.
func (t *Tracker) Transitioned(tr circuit.Transition) (streak int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.slowN, t.slowNext, t.slowCount = 0, 0, 0
	clear(t.slow) // every flag false while slowCount is 0
	t.latN, t.latNext, t.sinceSlope = 0, 0, 0
	t.degrading = false
	t.healthyRun = 0
	if tr.To == circuit.Open && circuit.CountsAsTrip(tr.Reason) {
		t.streak++
	}
	return t.streak
}

// Stats returns n, the success rate (0 when empty) and the median latency
// over successes.
func (t *Tracker) Stats() (n int, successRate float64, median time.Duration) {
	t.mu.Lock()
	outs := t.win.Outcomes()
	t.mu.Unlock()
	if len(outs) == 0 {
		return 0, 0, 0
	}
	return len(outs), 1 - circuit.FailureRate(outs), circuit.MedianLatency(outs)
}

// SlowedNow reports whether the median of the latest successes is past the
// slope's limit right now, whether or not an evaluation has said so yet.
func (t *Tracker) SlowedNow() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lat == nil || t.baseline == 0 || t.latN < len(t.lat) {
		return false
	}
	copy(t.scratch, t.lat)
	slices.Sort(t.scratch)
	median := t.scratch[len(t.scratch)/2]
	return median > max(time.Duration(float64(t.baseline)*t.p.SlopeMultiple), t.baseline+t.p.SlopeFloor)
}

// Rest is what a compacted domain keeps of its tracker.
type Rest struct {
	Streak, HealthyRun, Successes int
	SlowN, SlowNext               int // every one of them not slow
	Baseline                      time.Duration
	BaseFlight                    int
}

// Quiet returns what a compacted domain keeps of t, the outcomes in its
// record, and whether t is calm enough to be compacted: no slow call in
// its window, not degrading.
func (t *Tracker) Quiet() (r Rest, outs []circuit.Result, calm bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r = Rest{Streak: t.streak, HealthyRun: t.healthyRun, Successes: t.successes,
		SlowN: t.slowN, SlowNext: t.slowNext, Baseline: t.baseline, BaseFlight: t.baseFlight}
	return r, t.win.Outcomes(), t.slowCount == 0 && !t.degrading
}

// Revive puts r back into t, a tracker just made. The timeout in force
// stays with the domain; the next one is computed from a record of
// outcomes since the revival.
func (t *Tracker) Revive(r Rest) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.streak, t.healthyRun = r.Streak, r.HealthyRun
	t.successes, t.sinceTimeout = r.Successes, 0
	if t.slow != nil {
		t.slowN, t.slowNext = r.SlowN, r.SlowNext
	}
	t.baseline, t.baseFlight = r.Baseline, r.BaseFlight
}

// GrownCooldown is the cooldown of a domain that trips again before a
// healthy stretch, streak trips in a row (Envoy's ejection time): base ×
// streak, capped at most, drawn uniformly between base and that (full
// jitter; draw returns a number in [0, 1)) so that domains tripped
// together do not reopen together. false, and no draw, when it does not
// grow: a first trip, or most not above base.
func GrownCooldown(base, most time.Duration, streak int, draw func() float64) (time.Duration, bool) {
	if streak < 2 || most <= base {
		return base, false
	}
	grown := min(time.Duration(streak)*base, most)
	return base + time.Duration(draw()*float64(grown-base)), true
}
