package circuittest

import (
	"errors"
	"sync"
	"testing"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// RunHalfOpen tests probing: the in-flight limit, re-opening and closing.
func RunHalfOpen(t *testing.T, nc NewCircuit) {
	halfOpen := func(t *testing.T, p profile) *harness {
		h := newHarness(t, nc, p)
		h.trip()
		h.advance(p.Cooldown)
		return h
	}

	t.Run("LimitsProbesInFlightNotRecorded", func(t *testing.T) {
		h := halfOpen(t, standard()) // 2 probes
		p1, p2 := h.allow(), h.allow()
		e := h.refused()
		if e.State != circuit.HalfOpen {
			t.Fatalf("refusal state %s, want half-open", e.State)
		}
		h.record(p1, circuit.Success) // one slot frees
		p3 := h.allow()
		h.refused()
		h.record(p2, circuit.Success) // two passed: closes
		h.wantState(circuit.Closed)
		h.record(p3, circuit.Degraded) // stale: from the half-open round
		h.wantState(circuit.Closed)
	})

	t.Run("LimitsProbesUnderConcurrency", func(t *testing.T) {
		h := halfOpen(t, aggressive())       // 3 probes
		h.record(h.allow(), circuit.Success) // into half-open, one passed
		var wg sync.WaitGroup
		var mu sync.Mutex
		granted, refused := 0, 0
		for range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := h.c.Allow(h.clk)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					granted++
				case errors.Is(err, circuit.ErrOpen):
					refused++
				default:
					t.Errorf("Allow: %v", err)
				}
			}()
		}
		wg.Wait()
		if granted != 3 || refused != 197 {
			t.Fatalf("200 concurrent Allows in half-open: %d granted, %d refused; want 3 and 197", granted, refused)
		}
		if s := h.snapshot(); s.ProbesInFlight != 3 {
			t.Fatalf("probes in flight %d, want 3", s.ProbesInFlight)
		}
	})

	t.Run("OneFailedProbeReopens", func(t *testing.T) {
		h := halfOpen(t, standard())
		p1, p2 := h.allow(), h.allow()
		h.record(p1, circuit.Degraded)
		h.wantState(circuit.Open)
		tr := h.last()
		if tr.From != circuit.HalfOpen || tr.Reason != circuit.ReasonProbeFailed || !tr.RetryAt.Equal(h.now.Add(standard().Cooldown)) {
			t.Fatalf("transition %+v, want half-open→open (probe_failed) with a fresh cooldown", tr)
		}
		h.record(p2, circuit.Success) // the other probe's late success changes nothing
		h.wantState(circuit.Open)
		h.refused()
	})

	t.Run("AllProbesPassingClosesAndClearsTheWindow", func(t *testing.T) {
		h := halfOpen(t, standard())
		h.do(2, circuit.Success)
		h.wantState(circuit.Closed)
		if tr := h.last(); tr.Reason != circuit.ReasonProbesPassed || tr.To != circuit.Closed {
			t.Fatalf("transition %+v, want half-open→closed (probes_passed)", tr)
		}
		if s := h.snapshot(); s.WindowLen != 0 {
			t.Fatalf("window holds %d outcomes after closing, want 0", s.WindowLen)
		}
		// The window starts afresh: the failures from before the trip are
		// gone, and it takes need new ones to trip again.
		need := standard().FailuresToTrip()
		h.do(need-1, circuit.Degraded)
		h.wantState(circuit.Closed)
		h.do(1, circuit.Degraded)
		h.wantState(circuit.Open)
	})

	t.Run("UncountedProbeFreesItsSlot", func(t *testing.T) {
		h := halfOpen(t, conservative()) // 1 probe
		p := h.allow()
		h.refused()
		h.record(p, circuit.Throttled)
		h.wantState(circuit.HalfOpen)
		h.record(h.allow(), circuit.Success)
		h.wantState(circuit.Closed)
	})
}
