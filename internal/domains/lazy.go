package domains

import (
	"math"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// A domain of a broad crawl is often asked for a page or two. Its early
// warnings (the tracker: slow calls, the latency slope, the adaptive
// timeout, the trip streak) learn nothing from a few quick successes that
// the in-process circuit's window does not hold as well: the tracker is
// made only at the first outcome that is not a quick success, past
// lazyOutcomes successes, or at a transition, and begins from the
// circuit's window, as if it had seen those outcomes. What it does not
// get back: the stall each of them waited out (at most lazyOutcomes
// latencies in the slope's first ring, measured with the stall in).

// lazyOutcomes is how many quick successes a domain takes before it
// makes its tracker.
const lazyOutcomes = 2

// lazyFor is how many quick successes a domain of p takes before it makes
// its tracker: lazyOutcomes, or none where so few could already tell the
// tracker something its seed would not act on (a window, a healthy
// stretch or the adaptive timeout's first estimate that short).
func lazyFor(p circuit.Profile) int {
	if p.WindowSize <= lazyOutcomes || p.TimeoutMultiple > 0 && p.TimeoutAfter <= lazyOutcomes {
		return 0
	}
	return lazyOutcomes
}

// newTracker makes d's tracker, empty.
func (d *Domain) newTracker() *tracker {
	return newTracker(max(trackerSize, d.Profile.WindowSize), &d.Profile.early, &d.mu)
}

// trackerFor returns the tracker that observes o, an outcome whose request
// left with inFlight requests in flight, made now if o is the first that
// needs one; nil while d stays without (o a quick success among its first).
// The caller holds d.mu.
func (d *Domain) trackerFor(o circuit.Result, inFlight int) *tracker {
	if t := d.tracker.Load(); t != nil {
		return t
	}
	if !o.Class.Counted() {
		return nil // the tracker would not look at it
	}
	quick := o.Class == circuit.Success && (d.Profile.early.SlowCall <= 0 || o.Latency <= d.Profile.early.SlowCall)
	if quick && d.Counts[circuit.Success].Load() <= int32(d.Profile.lazy) {
		d.noteLazyFlight(inFlight)
		return nil
	}
	t := d.seededTracker(d.Circuit.OutcomesLocked())
	d.tracker.Store(t)
	return t
}

// trackerAt returns d's tracker at transition tr, made now if d had none,
// from the outcomes the circuit held when it moved.
func (d *Domain) trackerAt(tr circuit.Transition) *tracker {
	if t := d.tracker.Load(); t != nil {
		return t
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.tracker.Load()
	if t == nil {
		t = d.seededTracker(tr.Window)
		d.tracker.Store(t)
	}
	return t
}

// seededTracker makes d's tracker from outs, the outcomes d's circuit
// held while d had no tracker, oldest first. The caller holds d.mu.
func (d *Domain) seededTracker(outs []circuit.Result) *tracker {
	t := d.newTracker()
	for _, o := range outs {
		t.ObserveLocked(o, 0, 0)
	}
	if t.baseline == 0 {
		t.baseFlight = max(t.baseFlight, int32(d.lazyFlight()))
	}
	return t
}

// trackerMade returns d's tracker, made now from the circuit's window if
// d had none, as trackerFor makes it for an outcome that needs one.
func (d *Domain) trackerMade() *tracker { return d.windowTracker(true) }

// quietTracker is d's tracker for compaction: a tracker made for the
// moment from the circuit's window if d has none.
func (d *Domain) quietTracker() *tracker { return d.windowTracker(false) }

// windowTracker returns d's tracker or, if d has none, one seeded from
// the circuit's window, which d keeps if keep.
func (d *Domain) windowTracker(keep bool) *tracker {
	if t := d.tracker.Load(); t != nil {
		return t
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if t := d.tracker.Load(); t != nil {
		return t
	}
	t := d.seededTracker(d.Circuit.OutcomesLocked())
	if keep {
		d.tracker.Store(t)
	}
	return t
}

// trackerStats is tracker.Stats, read from the circuit's window while d
// has no tracker.
func (d *Domain) trackerStats() (n int, successRate float64, median time.Duration) {
	if t := d.tracker.Load(); t != nil {
		return t.Stats()
	}
	d.mu.Lock()
	t, outs := d.tracker.Load(), d.Circuit.OutcomesLocked()
	d.mu.Unlock()
	if t != nil {
		return t.Stats()
	}
	return statsOf(outs)
}

// lazyFlight is the most requests in flight as a success left while d had
// no tracker, for its slope's baseline: the top 16 bits of d.flags.
func (d *Domain) lazyFlight() int { return int(d.flags.Load() >> lazyShift) }

// noteLazyFlight raises lazyFlight to inFlight (at most 2¹⁶−1). The caller
// holds d.mu; the flags' other bits change without it, hence the swap.
func (d *Domain) noteLazyFlight(inFlight int) {
	if inFlight <= 0 {
		return
	}
	n := uint32(min(inFlight, math.MaxUint16))
	for {
		old := d.flags.Load()
		if old>>lazyShift >= n || d.flags.CompareAndSwap(old, old&(1<<lazyShift-1)|n<<lazyShift) {
			return
		}
	}
}
