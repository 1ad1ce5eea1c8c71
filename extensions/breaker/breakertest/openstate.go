package breakertest

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// RunOpen tests the cooldown of an open circuit.
func RunOpen(t *testing.T, nc NewCircuit) {
	t.Run("RefusesUntilCooldownBoundary", func(t *testing.T) {
		h := newHarness(t, nc, breaker.Standard())
		h.trip()
		opened := h.now
		h.advance(breaker.Standard().Cooldown - time.Nanosecond)
		e := h.refused()
		if e.State != breaker.Open || !e.RetryAt.Equal(opened.Add(breaker.Standard().Cooldown)) {
			t.Fatalf("refusal %+v, want open until %v", e, opened.Add(breaker.Standard().Cooldown))
		}
		h.wantState(breaker.Open)
		h.advance(time.Nanosecond) // exactly the cooldown: probing starts
		p := h.allow()
		if !p.Probe {
			t.Fatal("first request after the cooldown is not a probe")
		}
		h.wantState(breaker.HalfOpen)
		if tr := h.last(); tr.From != breaker.Open || tr.To != breaker.HalfOpen || tr.Reason != breaker.ReasonCooldownElapsed {
			t.Fatalf("transition %s→%s (%s), want open→half-open (cooldown_elapsed)", tr.From, tr.To, tr.Reason)
		}
	})

	t.Run("CountsTrips", func(t *testing.T) {
		h := newHarness(t, nc, breaker.Conservative())
		h.trip()
		if s := h.snapshot(); s.Trips != 1 {
			t.Fatalf("trips = %d, want 1", s.Trips)
		}
		h.advance(breaker.Conservative().Cooldown)
		h.record(h.allow(), breaker.Degraded) // the probe fails
		if s := h.snapshot(); s.Trips != 2 || s.State != breaker.Open {
			t.Fatalf("after a failed probe: %+v, want open with 2 trips", s)
		}
	})
}
