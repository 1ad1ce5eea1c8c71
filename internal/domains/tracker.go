package domains

// A domain's early warnings: what its latest outcomes reveal before the
// circuit's failure rate does.

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/idle"
	"github.com/breakwater-crawl/breakwater/internal/window"
)

// trackerSettings are the profile's fields the tracker reads (breaker.Profile):
// a copy of its own, next to what each outcome writes.
type trackerSettings struct {
	WindowSize      int
	SlowCall        time.Duration
	SlowCallRate    float64
	SlopeMultiple   float64
	SlopeFloor      time.Duration
	TimeoutMultiple float64
	TimeoutAfter    int
	TimeoutFloor    time.Duration
}

// slowNeed is how many slow calls in a full window trip the circuit.
func (p *trackerSettings) slowNeed() int {
	return circuit.Settings{WindowSize: p.WindowSize, FailureThreshold: p.SlowCallRate}.FailuresToTrip()
}

// tracker is a domain's record of its latest outcomes, which no transition
// clears, and what it computes from it: slow calls, the latency slope, the
// trip streak behind cooldown growth, the adaptive timeout.
type tracker struct {
	// The fields every outcome writes come first, for the cache.
	win window.Window[circuit.Result] // latest counted outcomes: Stats
	// Counters of 32 bits: each is bounded by a window or a period, but
	// successes, which stops growing once past every threshold it meets.
	slowNext     int32
	slowCount    int32
	latNext      int32
	sinceSlope   int32
	successes    int32
	healthyRun   int32 // successes in a row while closed
	sinceTimeout int32
	slowN        int32
	latN         int32
	streak       int32 // trips since the last healthy stretch

	mu *sync.Mutex // the caller's (New)

	// slow holds the slow flags of the latest counted outcomes; all false
	// while slowCount is 0.
	slow []bool

	lat        []time.Duration // latencies of the latest successes (slope), a ring
	sorted     []time.Duration // lat's values in order, kept as lat is written: its median is at hand
	baseline   time.Duration
	baseFlight int32 // the most requests in flight a success before the baseline left with (0: not known)
	degrading  bool  // beside baseFlight: one word for both

	p *trackerSettings // shared by the domains of a profile

	// timeout is the domain's adaptive request timeout in ns (0: none
	// yet), slowAfter the same before its floor (Domain.Timeout, Slow): read
	// and written with atomic.LoadInt64 and its kin, not the lock (not
	// atomic.Int64s: tests print a tracker by value).
	timeout, slowAfter int64
	// fails counts the domain's failures since its last transition, and
	// netFails those of them with no HTTP answer at all (refused, reset,
	// timeout, DNS): atomic.AddInt32 and its kin, as above.
	fails, netFails int32
}

// slopeSamples is how many latest successes the slope's median looks at.
func slopeSamples(p trackerSettings) int { return min(max(5, p.WindowSize/2), 20) }

// How often, in successes, the slope is evaluated and the adaptive
// timeout recomputed: each costs a sort.
const (
	slopeEvery   = 4
	timeoutEvery = 100
)

// New returns a tracker with settings p, its record size outcomes long,
// locked by mu, which the caller holds for ObserveLocked.
func newTracker(size int, p *trackerSettings, mu *sync.Mutex) *tracker {
	// No failure count: Stats counts from the outcomes.
	t := &tracker{p: p, win: window.New[circuit.Result](size), mu: mu}
	return t
}

// trackerSignals is what one outcome revealed.
type trackerSignals struct {
	SlowTrip  bool    // a full window of slow calls at or above the rate
	SlowShare float64 // their share
	Slope     int     // +1 the median climbed past the slope, -1 it came back, 0 no news
	Median    time.Duration
	Baseline  time.Duration
	Healthy   bool          // a healthy stretch ended: one trip off the streak
	Timeout   time.Duration // a new adaptive timeout, if > 0
	Slow      time.Duration // with it, TimeoutMultiple × p95 before the floor: slower is abnormal
}

// Any reports whether s holds any signal: s != trackerSignals{}, field by field
// (the struct comparison is a call, on every outcome).
func (s trackerSignals) Any() bool {
	return s.SlowTrip || s.SlowShare != 0 || s.Slope != 0 || s.Median != 0 || s.Baseline != 0 || s.Healthy || s.Timeout != 0 || s.Slow != 0
}

// ObserveLocked records one outcome and says what it revealed; the
// caller holds the tracker's mutex. inFlight is the requests in flight as
// its request left, itself included (0: unknown); stalled is how long of
// its latency this process was kept from running (a loaded machine, a
// collection), which the slope leaves out.
func (t *tracker) ObserveLocked(o circuit.Result, inFlight int, stalled time.Duration) (s trackerSignals) {
	if !o.Class.Counted() {
		return s
	}
	t.win.Add(o)
	success := o.Class == circuit.Success

	ws := int32(t.p.WindowSize) // validated: far below 2³¹
	if t.p.SlowCall > 0 {
		isSlow := success && o.Latency > t.p.SlowCall
		full := t.slowN == ws
		if !full {
			t.slowN++
		}
		if isSlow || t.slowCount > 0 { // else the flag it replaces is false, as it is
			if t.slow == nil {
				t.slow = make([]bool, t.p.WindowSize) // at the first slow call: all false before
			}
			if full && t.slow[t.slowNext] {
				t.slowCount--
			}
			t.slow[t.slowNext] = isSlow
			if isSlow {
				t.slowCount++
			}
		}
		if t.slowNext++; t.slowNext == ws {
			t.slowNext = 0
		}
		if t.slowCount > 0 && t.slowN == ws && int(t.slowCount) >= t.p.slowNeed() {
			s.SlowTrip = true
			s.SlowShare = float64(t.slowCount) / float64(t.slowN)
		}
	}

	if !success {
		t.healthyRun = 0
		return s
	}
	if t.successes < math.MaxInt32 { // past every threshold by then
		t.successes++
	}
	t.healthyRun++
	if t.healthyRun >= ws {
		t.healthyRun = 0
		if t.streak > 0 {
			t.streak--
			s.Healthy = true
		}
	}

	if k := slopeSamples(*t.p); t.p.SlopeMultiple > 0 && t.slopeEvidenceLocked(inFlight) {
		t.putLatLocked(max(o.Latency-stalled, 0), k)
		if int(t.latN) < k {
			t.latN++ // not written once full: an unchanged line is not taken from another core
		}
		t.sinceSlope++
		switch {
		case t.baseline == 0 && t.successes >= ws:
			t.baseline = circuit.MedianLatency(t.win.Outcomes())
		case t.baseline > 0 && int(t.latN) == k && t.sinceSlope >= slopeEvery:
			t.sinceSlope = 0
			s.Slope, s.Median, s.Baseline = t.slopeLocked()
		}
	}

	if after := int32(min(t.p.TimeoutAfter, math.MaxInt32)); t.p.TimeoutMultiple > 0 && t.successes >= after {
		t.sinceTimeout++
		if t.successes == after || t.sinceTimeout >= timeoutEvery {
			t.sinceTimeout = 0
			s.Timeout, s.Slow = t.timeoutLocked()
		}
	}
	return s
}

// slopeEvidenceLocked says whether a success whose request left with
// inFlight requests in flight (0: unknown) counts for the slope. One sent
// with more in flight than any before the baseline does not: its latency
// includes the queue the client made itself.
func (t *tracker) slopeEvidenceLocked(inFlight int) bool {
	if t.baseline == 0 {
		t.baseFlight = int32(min(max(int(t.baseFlight), inFlight), math.MaxInt32))
		return true
	}
	return inFlight == 0 || t.baseFlight == 0 || inFlight <= int(t.baseFlight)
}

// slopeLocked compares the median of the latest successes with the
// baseline, which a faster stretch lowers; past the limit is degrading.
func (t *tracker) slopeLocked() (change int, median, baseline time.Duration) {
	median = t.latMedianLocked()
	t.baseline = min(t.baseline, median)
	slowed := median > t.slopeLimitLocked()
	switch {
	case slowed && !t.degrading:
		change = +1
	case !slowed && t.degrading:
		change = -1
	}
	t.degrading = slowed
	return change, median, t.baseline
}

// putLatLocked writes v into the slope's ring of k, over its oldest
// latency, and moves it to its place in sorted: one value out, one in,
// instead of a sort at each evaluation. Until the ring is k long it grows:
// a domain with few successes holds few.
func (t *tracker) putLatLocked(v time.Duration, k int) {
	if len(t.lat) < k {
		if len(t.lat) == cap(t.lat) { // double, to k at most: append would round a 10 up to 16
			n := min(max(2*cap(t.lat), 2), k)
			t.lat, t.sorted = append(make([]time.Duration, 0, n), t.lat...), append(make([]time.Duration, 0, n), t.sorted...)
		}
		t.lat = append(t.lat, v) // in order: once full, the oldest is at latNext, 0
		i, _ := slices.BinarySearch(t.sorted, v)
		t.sorted = slices.Insert(t.sorted, i, v)
		return
	}
	old := t.lat[t.latNext]
	t.lat[t.latNext] = v
	if t.latNext++; int(t.latNext) == len(t.lat) {
		t.latNext = 0
	}
	if v == old {
		return
	}
	s := t.sorted
	i, _ := slices.BinarySearch(s, old) // old's place (the first of equals)
	j, _ := slices.BinarySearch(s, v)   // v's: before the first ≥ v
	if j > i {                          // v > old: what lies between moves down
		copy(s[i:j-1], s[i+1:j])
		s[j-1] = v
	} else { // v < old: what lies between moves up
		copy(s[j+1:i+1], s[j:i])
		s[j] = v
	}
}

// latMedianLocked is the median of the slope's latest successes.
func (t *tracker) latMedianLocked() time.Duration { return t.sorted[len(t.sorted)/2] }

func (t *tracker) slopeLimitLocked() time.Duration {
	return max(time.Duration(float64(t.baseline)*t.p.SlopeMultiple), t.baseline+t.p.SlopeFloor)
}

// timeoutLocked is TimeoutMultiple × the window's p95, ≥ TimeoutFloor,
// and the same before the floor.
func (t *tracker) timeoutLocked() (timeout, slow time.Duration) {
	// Every 100 successes, on the stack while the window fits (a sync.Pool
	// drops what it holds under the race detector, and a field costs every
	// domain a pointer).
	var scratch [trackerSize]time.Duration
	lats := scratch[:0]
	for _, o := range t.win.Buf[:t.win.N] { // order does not matter here
		if o.Class == circuit.Success {
			lats = append(lats, o.Latency)
		}
	}
	if len(lats) == 0 {
		return 0, 0
	}
	slices.Sort(lats)
	p95 := lats[min(len(lats)-1, len(lats)*95/100)]
	slow = time.Duration(float64(p95) * t.p.TimeoutMultiple)
	return max(slow, t.p.TimeoutFloor), slow
}

// Transitioned clears what is judged per window and returns the streak,
// one more for a trip.
func (t *tracker) Transitioned(tr circuit.Transition) (streak int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.slowN, t.slowNext, t.slowCount = 0, 0, 0
	clear(t.slow) // every flag false while slowCount is 0
	t.latN, t.latNext, t.sinceSlope = 0, 0, 0
	if len(t.lat) < slopeSamples(*t.p) {
		// Not full: it fills again from empty (a full ring's values are
		// all written over before its median is read again).
		t.lat, t.sorted = t.lat[:0], t.sorted[:0]
	}
	t.degrading = false
	t.healthyRun = 0
	if tr.To == circuit.Open && circuit.CountsAsTrip(tr.Reason) {
		t.streak++
	}
	return int(t.streak)
}

// Stats returns n, the success rate (0 when empty) and the median latency.
func (t *tracker) Stats() (n int, successRate float64, median time.Duration) {
	t.mu.Lock()
	outs := t.win.Outcomes()
	t.mu.Unlock()
	return statsOf(outs)
}

// statsOf is Stats of outs: their count, success rate (0 when empty) and
// median latency.
func statsOf(outs []circuit.Result) (n int, successRate float64, median time.Duration) {
	if len(outs) == 0 {
		return 0, 0, 0
	}
	return len(outs), 1 - circuit.FailureRate(outs), circuit.MedianLatency(outs)
}

// slopeNow reads, under one lock, how far the median of t's latest
// successes is above its baseline and whether it is past the slope's
// limit (ok: t has both a baseline and a full ring).
func (t *tracker) slopeNow() (excess time.Duration, past, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.p.SlopeMultiple <= 0 || t.baseline == 0 || int(t.latN) != slopeSamples(*t.p) {
		return 0, false, false
	}
	median := t.latMedianLocked()
	return median - t.baseline, median > t.slopeLimitLocked(), true
}

// Quiet writes into r what a compacted domain keeps of t, and reports
// whether t is calm (no slow call, not degrading): only then its outcomes
// summed up.
func (t *tracker) Quiet(r *idle.Record) (calm bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r.Streak, r.HealthyRun, r.Successes = int64(t.streak), int64(t.healthyRun), int64(t.successes)
	r.SlowN, r.SlowNext, r.Baseline, r.BaseFlight = int64(t.slowN), int64(t.slowNext), int64(t.baseline), int64(t.baseFlight)
	calm = t.slowCount == 0 && !t.degrading
	if outs := t.win.Outcomes(); calm && len(outs) > 0 {
		r.Tracked, r.Rate, r.Median = int64(len(outs)), float32(1-circuit.FailureRate(outs)), int64(circuit.MedianLatency(outs))
	}
	return calm
}

// Revive puts back into t, a tracker just made, what r kept of it (every
// one of its SlowN latest outcomes not slow).
func (t *tracker) Revive(r *idle.Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.streak, t.healthyRun, t.successes, t.sinceTimeout = clamp32(r.Streak), clamp32(r.HealthyRun), clamp32(r.Successes), 0
	if t.p.SlowCall > 0 {
		t.slowN, t.slowNext = clamp32(r.SlowN), clamp32(r.SlowNext)
	}
	t.baseline, t.baseFlight = time.Duration(r.Baseline), int32(min(r.BaseFlight, math.MaxInt32))
}

// grownCooldown is the cooldown after streak trips in a row, drawn
// uniformly (draw is in [0, 1)) between base and min(base × streak, most);
// false, without a draw, when it does not grow.
func grownCooldown(base, most time.Duration, streak int, draw func() float64) (time.Duration, bool) {
	if streak < 2 || most <= base {
		return base, false
	}
	grown := min(time.Duration(streak)*base, most)
	return base + time.Duration(draw()*float64(grown-base)), true
}

// slopePeers and slopePeerAge bound slowedElsewhere's look at the fleet.
const (
	slopePeers   = 16
	slopePeerAge = 30 * time.Second
)

// slowedElsewhere tells the crawler's own slowness from a site's: of up to
// slopePeers other domains whose slope was evaluated within slopePeerAge, it counts
// those slowed now: past their own slope limit, or above their baseline
// by at least half of self's excess (a delay of the crawler's own adds
// alike to every domain's latency, and crosses a fast domain's limit
// first). peers yields each domain's tracker and when its slope was last
// evaluated (unix nanos).
func slowedElsewhere(self *tracker, now time.Time, peers func(yield func(t *tracker, evaluated int64) bool)) (slowed, of int) {
	selfExcess, _, _ := self.slopeNow()
	since := now.Add(-slopePeerAge).UnixNano()
	looked := 0
	peers(func(t *tracker, evaluated int64) bool {
		looked++
		if t != self && evaluated >= since {
			of++
			if e, past, ok := t.slopeNow(); ok && (past || selfExcess > 0 && 2*e >= selfExcess) {
				slowed++
			}
		}
		return of < slopePeers && looked < 16*slopePeers
	})
	return slowed, of
}

// clamp32 is n as an int32, held within its range.
func clamp32(n int64) int32 { return int32(min(max(n, math.MinInt32), math.MaxInt32)) }
