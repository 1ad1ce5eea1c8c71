package breakertest

import (
	"errors"
	"sync"
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/internal/circuit"
)

// RunHalfOpen tests probing: the in-flight limit, re-opening and closing.
func RunHalfOpen(t *testing.T, nc NewCircuit) {
	halfOpen := func(t *testing.T, p breaker.Profile) *harness {
		h := newHarness(t, nc, p)
		h.trip()
		h.advance(p.Cooldown)
		return h
	}

	t.Run("LimitsProbesInFlightNotRecorded", func(t *testing.T) {
		h := halfOpen(t, breaker.Standard()) // 2 probes
		p1, p2 := h.allow(), h.allow()
		e := h.refused()
		if e.State != breaker.HalfOpen {
			t.Fatalf("refusal state %s, want half-open", e.State)
		}
		h.record(p1, breaker.Success) // one slot frees
		p3 := h.allow()
		h.refused()
		h.record(p2, breaker.Success) // two passed: closes
		h.wantState(breaker.Closed)
		h.record(p3, breaker.Degraded) // stale: from the half-open round
		h.wantState(breaker.Closed)
	})

	t.Run("LimitsProbesUnderConcurrency", func(t *testing.T) {
		h := halfOpen(t, breaker.Aggressive()) // 3 probes
		h.record(h.allow(), breaker.Success)   // into half-open, one passed
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
				case errors.Is(err, breaker.ErrOpen):
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
		h := halfOpen(t, breaker.Standard())
		p1, p2 := h.allow(), h.allow()
		h.record(p1, breaker.Degraded)
		h.wantState(breaker.Open)
		tr := h.last()
		if tr.From != breaker.HalfOpen || tr.Reason != breaker.ReasonProbeFailed || !tr.RetryAt.Equal(h.now.Add(breaker.Standard().Cooldown)) {
			t.Fatalf("transition %+v, want half-open→open (probe_failed) with a fresh cooldown", tr)
		}
		h.record(p2, breaker.Success) // the other probe's late success changes nothing
		h.wantState(breaker.Open)
		h.refused()
	})

	t.Run("AllProbesPassingClosesAndClearsTheWindow", func(t *testing.T) {
		h := halfOpen(t, breaker.Standard())
		h.do(2, breaker.Success)
		h.wantState(breaker.Closed)
		if tr := h.last(); tr.Reason != breaker.ReasonProbesPassed || tr.To != breaker.Closed {
			t.Fatalf("transition %+v, want half-open→closed (probes_passed)", tr)
		}
		if s := h.snapshot(); s.WindowLen != 0 {
			t.Fatalf("window holds %d outcomes after closing, want 0", s.WindowLen)
		}
		// The window starts afresh: the failures from before the trip are
		// gone, and it takes need new ones to trip again.
		need := circuit.FailuresToTrip(breaker.Standard().FailureThreshold, breaker.Standard().WindowSize)
		h.do(need-1, breaker.Degraded)
		h.wantState(breaker.Closed)
		h.do(1, breaker.Degraded)
		h.wantState(breaker.Open)
	})

	t.Run("UncountedProbeFreesItsSlot", func(t *testing.T) {
		h := halfOpen(t, breaker.Conservative()) // 1 probe
		p := h.allow()
		h.refused()
		h.record(p, breaker.Throttled)
		h.wantState(breaker.HalfOpen)
		h.record(h.allow(), breaker.Success)
		h.wantState(breaker.Closed)
	})
}
