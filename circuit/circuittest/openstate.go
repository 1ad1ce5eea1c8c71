package circuittest

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// RunOpen tests the cooldown of an open circuit.
func RunOpen(t *testing.T, nc NewCircuit) {
	t.Run("RefusesUntilCooldownBoundary", func(t *testing.T) {
		h := newHarness(t, nc, standard())
		h.trip()
		opened := h.now
		h.advance(standard().Cooldown - time.Nanosecond)
		e := h.refused()
		if e.State != circuit.Open || !e.RetryAt.Equal(opened.Add(standard().Cooldown)) {
			t.Fatalf("refusal %+v, want open until %v", e, opened.Add(standard().Cooldown))
		}
		h.wantState(circuit.Open)
		h.advance(time.Nanosecond) // exactly the cooldown: probing starts
		p := h.allow()
		if !p.Probe {
			t.Fatal("first request after the cooldown is not a probe")
		}
		h.wantState(circuit.HalfOpen)
		if tr := h.last(); tr.From != circuit.Open || tr.To != circuit.HalfOpen || tr.Reason != circuit.ReasonCooldownElapsed {
			t.Fatalf("transition %s→%s (%s), want open→half-open (cooldown_elapsed)", tr.From, tr.To, tr.Reason)
		}
	})

	t.Run("CountsTrips", func(t *testing.T) {
		h := newHarness(t, nc, conservative())
		h.trip()
		if s := h.snapshot(); s.Trips != 1 {
			t.Fatalf("trips = %d, want 1", s.Trips)
		}
		h.advance(conservative().Cooldown)
		h.record(h.allow(), circuit.Degraded) // the probe fails
		if s := h.snapshot(); s.Trips != 2 || s.State != circuit.Open {
			t.Fatalf("after a failed probe: %+v, want open with 2 trips", s)
		}
	})
}
