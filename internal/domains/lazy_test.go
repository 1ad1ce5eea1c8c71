package domains

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
)

// A domain that makes its tracker late (lazy.go) ends up with the tracker
// it would have had from its first outcome: for every number of quick
// successes before the first outcome that needs one (a slow success, a
// failure, or one success too many), the tracker's state and Stats are
// those of a tracker that saw every outcome.
func TestALateTrackerIsTheTrackerThatSawEverything(t *testing.T) {
	p := Standard()
	p.SlowCall = 500 * time.Millisecond
	rng := rand.New(rand.NewPCG(1, 2))
	for quick := range 5 {
		for _, first := range []circuit.Result{
			{Class: circuit.Success, Latency: 900 * time.Millisecond}, // slow
			{Class: circuit.Degraded, Latency: 30 * time.Millisecond}, // a failure
			{Class: circuit.Success, Latency: 40 * time.Millisecond},  // quick
			{Class: circuit.Throttled},                                // not counted
		} {
			clk := clocktest.NewFake(time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC))
			b, err := New(Config{Profile: p, Clock: clk, AlarmAfter: 10, BlockedAfter: 10})
			if err != nil {
				t.Fatal(err)
			}
			var outs []circuit.Result
			for range quick {
				outs = append(outs, circuit.Result{Class: circuit.Success, Latency: time.Duration(10+rng.IntN(90)) * time.Millisecond})
			}
			outs = append(outs, first)
			for range 40 {
				o := circuit.Result{Class: circuit.Success, Latency: time.Duration(10+rng.IntN(900)) * time.Millisecond}
				if rng.IntN(10) == 0 {
					o.Class = circuit.Degraded
				}
				outs = append(outs, o)
			}
			ref := newTracker(max(trackerSize, p.WindowSize), &b.base.early, new(sync.Mutex))
			for i, o := range outs {
				tk, err := b.Allow("shop.test")
				if err != nil {
					t.Fatalf("quick %d, first %v: outcome %d refused: %v", quick, first, i, err)
				}
				b.Record(tk, o)
				ref.mu.Lock()
				ref.ObserveLocked(o, 0, 0)
				ref.mu.Unlock()
				d := b.Lookup("shop.test")
				if got, want := d.tracker.Load() == nil, allQuick(outs[:i+1], p.SlowCall); got != want {
					t.Fatalf("quick %d, first %v: after outcome %d the domain has no tracker: %v, want %v", quick, first, i, got, want)
				}
				n, rate, med := d.trackerStats()
				rn, rrate, rmed := ref.Stats()
				if n != rn || rate != rrate || med != rmed {
					t.Fatalf("quick %d, first %v: after outcome %d Stats = %d %v %v, want %d %v %v", quick, first, i, n, rate, med, rn, rrate, rmed)
				}
			}
			got := b.Lookup("shop.test").tracker.Load()
			if got == nil {
				t.Fatalf("quick %d, first %v: no tracker after %d outcomes", quick, first, len(outs))
			}
			if got.successes != ref.successes || got.healthyRun != ref.healthyRun || got.streak != ref.streak ||
				got.slowN != ref.slowN || got.slowNext != ref.slowNext || got.slowCount != ref.slowCount ||
				got.baseline != ref.baseline || got.latN != ref.latN || !slices.Equal(got.lat, ref.lat) ||
				!slices.Equal(got.win.Outcomes(), ref.win.Outcomes()) {
				t.Fatalf("quick %d, first %v: the late tracker differs from one that saw everything:\n got %+v\nwant %+v", quick, first, *got, *ref)
			}
		}
	}
}

// allQuick says whether every counted outcome of outs is a quick success.
func allQuick(outs []circuit.Result, slow time.Duration) bool {
	n := 0
	for _, o := range outs {
		if !o.Class.Counted() {
			continue
		}
		if o.Class != circuit.Success || o.Latency > slow {
			return false
		}
		n++
	}
	return n <= lazyOutcomes
}
