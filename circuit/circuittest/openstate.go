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

	t.Run("HoldsCountAsTripsOnlyForTheKeysOwnFailures", func(t *testing.T) {
		for _, tc := range []struct {
			reason string
			trips  int
		}{
			{circuit.ReasonLatencySlope, 1},
			{circuit.ReasonSlowCalls, 1},
			{circuit.ReasonFleetPause, 0},
			{circuit.ReasonThrottleHorizon, 0},
		} {
			h := newHarness(t, nc, standard())
			tr, err := h.c.HoldOpen(h.clk, h.now.Add(time.Minute), tc.reason)
			if err != nil {
				t.Fatalf("%s: HoldOpen: %v", tc.reason, err)
			}
			if tr.To != circuit.Open || tr.Reason != tc.reason {
				t.Errorf("%s: transition %s→%s (%s), want → open for that reason", tc.reason, tr.From, tr.To, tr.Reason)
			}
			if s := h.snapshot(); s.State != circuit.Open || s.Trips != tc.trips {
				t.Errorf("%s: %v with %d trips, want open with %d (CountsAsTrip)", tc.reason, s.State, s.Trips, tc.trips)
			}
		}
	})
}
