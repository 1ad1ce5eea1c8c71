package domains

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// TestSortedLatenciesFollowTheRing checks that the slope's sorted
// latencies are always the ring's values in order, so its median is the
// one a sort of the ring gives, through repeated values, slow and failed
// outcomes, and transitions (which leave the ring's old values in place).
func TestSortedLatenciesFollowTheRing(t *testing.T) {
	for _, w := range []int{5, 10, 20, 50} {
		tr := newTracker(100, &trackerSettings{WindowSize: w, SlowCall: time.Second, SlowCallRate: 0.8, SlopeMultiple: 3,
			SlopeFloor: 200 * time.Millisecond, TimeoutMultiple: 4, TimeoutAfter: 20}, new(sync.Mutex))
		rnd := rand.New(rand.NewPCG(uint64(w), 7))
		for step := range 20000 {
			switch rnd.IntN(200) {
			case 0:
				tr.Transitioned(circuit.Transition{From: circuit.Closed, To: circuit.Open, Reason: circuit.ReasonFailureRate})
			case 1:
				tr.ObserveLocked(circuit.Result{Class: circuit.Degraded}, 0, 0)
			}
			// Few distinct values, so that many writes replace a value by
			// an equal one or land among equals.
			lat := time.Duration(rnd.IntN(8)) * 100 * time.Millisecond
			if rnd.IntN(10) == 0 {
				lat = time.Duration(rnd.Int64N(int64(3 * time.Second)))
			}
			tr.ObserveLocked(circuit.Result{Class: circuit.Success, Latency: lat}, rnd.IntN(4), 0)
			want := slices.Clone(tr.lat)
			slices.Sort(want)
			if !slices.Equal(tr.sorted, want) {
				t.Fatalf("window %d, step %d: sorted %v, want %v", w, step, tr.sorted, want)
			}
			if got := tr.latMedianLocked(); got != want[len(want)/2] {
				t.Fatalf("window %d, step %d: median %v, want %v", w, step, got, want[len(want)/2])
			}
		}
	}
}

// TestTheSlopesMedianIsTheFullRingsAfterTransitions checks the ring that
// grows as successes come (a domain with few holds few) against a model
// of the ring made full at once: every median the slope reports is the
// median of the latest k successes since the last transition, as the
// full ring's was, transitions mid-growth included.
func TestTheSlopesMedianIsTheFullRingsAfterTransitions(t *testing.T) {
	for _, w := range []int{5, 10, 20, 50} {
		p := &trackerSettings{WindowSize: w, SlopeMultiple: 3, SlopeFloor: 200 * time.Millisecond}
		tr := newTracker(100, p, new(sync.Mutex))
		k := slopeSamples(*p)
		ring, next, n := make([]time.Duration, k), 0, 0 // the model: full from the start
		rnd := rand.New(rand.NewPCG(uint64(w), 11))
		medians := 0
		for step := range 20000 {
			if rnd.IntN(3*k) == 0 {
				tr.Transitioned(circuit.Transition{From: circuit.Closed, To: circuit.Open, Reason: circuit.ReasonFailureRate})
				next, n = 0, 0
			}
			lat := time.Duration(1+rnd.IntN(8)) * 100 * time.Millisecond
			s := tr.ObserveLocked(circuit.Result{Class: circuit.Success, Latency: lat}, 0, 0)
			ring[next] = lat
			next = (next + 1) % k
			n = min(n+1, k)
			if s.Median == 0 {
				continue
			}
			medians++
			if n != k {
				t.Fatalf("window %d, step %d: a median after %d of %d successes since the transition", w, step, n, k)
			}
			want := slices.Clone(ring)
			slices.Sort(want)
			if s.Median != want[k/2] {
				t.Fatalf("window %d, step %d: median %v, want %v (ring %v)", w, step, s.Median, want[k/2], ring)
			}
		}
		if medians == 0 {
			t.Fatalf("window %d: no median reported in 20000 successes", w)
		}
	}
}
