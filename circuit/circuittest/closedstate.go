package circuittest

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// RunClosed tests when a closed circuit trips and when it must not.
func RunClosed(t *testing.T, nc NewCircuit) {
	t.Run("FewerFailuresThanNeedNeverTrip", func(t *testing.T) {
		h := newHarness(t, nc, standard())
		need := standard().FailuresToTrip()
		h.do(need-1, circuit.Degraded)
		h.wantState(circuit.Closed)
		if s := h.snapshot(); s.WindowLen != need-1 || s.WindowFailures != need-1 {
			t.Fatalf("window holds %d outcomes, %d failures; want %d and %d", s.WindowLen, s.WindowFailures, need-1, need-1)
		}
		if n := h.c.WindowFailures(); n != need-1 {
			t.Fatalf("WindowFailures() = %d after %d failures recorded here, want %d", n, need-1, need-1)
		}
		h.do(1, circuit.Degraded)
		h.wantState(circuit.Open)
		if n := h.c.WindowFailures(); n != 0 {
			t.Fatalf("WindowFailures() = %d once the circuit opened, want 0: the trip cleared the window", n)
		}
	})

	t.Run("TripsAtNeedFailuresBeforeTheWindowIsFull", func(t *testing.T) {
		// A fresh start (or a resume) into a failing site: whatever fills
		// the rest of the window, need failures already make the rate of
		// a full window reach the threshold, so waiting for the window to
		// fill would only send more requests into the failure.
		for _, p := range []profile{conservative(), standard(), aggressive()} {
			need := p.FailuresToTrip()
			h := newHarness(t, nc, p)
			h.do(1, circuit.Success)
			h.do(need-1, circuit.Degraded)
			h.wantState(circuit.Closed)
			h.do(1, circuit.Degraded)
			h.wantState(circuit.Open)
			if h.sent != need+1 {
				t.Fatalf("%s: tripped after %d requests, want %d (1 success, then %d failures)", p.Name, h.sent, need+1, need)
			}
			if r := h.last().Reason; r != circuit.ReasonFailureRate {
				t.Fatalf("%s: reason %q, want %q", p.Name, r, circuit.ReasonFailureRate)
			}
		}
	})

	t.Run("OpensWhenWindowFullAtThreshold", func(t *testing.T) {
		// Seed 000's timeline, one request at a time: 30 healthy pages,
		// then 503s. The window holds 20 successes; each failure pushes
		// one out; the 10th failure (request 40) makes it 10/20 = 0.5.
		h := newHarness(t, nc, standard())
		h.do(30, circuit.Success)
		h.do(9, circuit.Degraded)
		h.wantState(circuit.Closed)
		h.do(1, circuit.Degraded)
		h.wantState(circuit.Open)
		if h.sent != 40 {
			t.Fatalf("tripped after %d requests, want 40", h.sent)
		}
		tr := h.last()
		if tr.From != circuit.Closed || tr.To != circuit.Open || tr.Reason != circuit.ReasonFailureRate {
			t.Fatalf("transition %s→%s (%s), want closed→open (failure_rate)", tr.From, tr.To, tr.Reason)
		}
		if len(tr.Window) != 20 || tr.FailureRate != 0.5 {
			t.Fatalf("trip evidence: %d outcomes at rate %v, want 20 at 0.5", len(tr.Window), tr.FailureRate)
		}
		if tr.MedianLatency != 40*time.Millisecond {
			t.Fatalf("median latency %v, want 40ms", tr.MedianLatency)
		}
		if want := h.now.Add(standard().Cooldown); !tr.RetryAt.Equal(want) {
			t.Fatalf("RetryAt %v, want %v", tr.RetryAt, want)
		}
		if e := h.refused(); !e.RetryAt.Equal(tr.RetryAt) || e.Key != "shop.test:8080" {
			t.Fatalf("refusal %+v, want domain shop.test:8080 retry at %v", e, tr.RetryAt)
		}
	})

	t.Run("ThresholdIsExactForEveryProfile", func(t *testing.T) {
		for _, p := range []profile{conservative(), standard(), aggressive()} {
			need := p.FailuresToTrip()
			// A full window with one failure fewer than needed stays
			// closed; the next failure (replacing a success) trips.
			h := newHarness(t, nc, p)
			h.do(p.WindowSize-(need-1), circuit.Success)
			h.do(need-1, circuit.Degraded)
			h.wantState(circuit.Closed)
			h.do(1, circuit.Degraded)
			h.wantState(circuit.Open)
			if rate := float64(need) / float64(p.WindowSize); rate < p.FailureThreshold {
				t.Fatalf("%s: tripped at rate %v below threshold %v", p.Name, rate, p.FailureThreshold)
			}
			if rate := float64(need-1) / float64(p.WindowSize); rate >= p.FailureThreshold {
				t.Fatalf("%s: did not trip at rate %v at or above threshold %v", p.Name, rate, p.FailureThreshold)
			}
		}
	})

	t.Run("BelowThresholdStaysClosed", func(t *testing.T) {
		h := newHarness(t, nc, standard())
		for range 100 { // 1 failure in 3: rate 0.33 < 0.5
			h.do(2, circuit.Success)
			h.do(1, circuit.Degraded)
		}
		h.wantState(circuit.Closed)
	})

	t.Run("ConsecutiveFailuresTrip", func(t *testing.T) {
		p := standard()
		p.Name, p.ConsecutiveFailures = "three-strikes", 3
		h := newHarness(t, nc, p)
		h.do(1, circuit.Success)
		h.do(2, circuit.Invalid)
		h.do(1, circuit.Success) // the run resets
		h.do(2, circuit.Degraded)
		h.wantState(circuit.Closed)
		h.do(1, circuit.Invalid)
		h.wantState(circuit.Open)
		if r := h.last().Reason; r != circuit.ReasonConsecutiveFailures {
			t.Fatalf("reason %q, want %q", r, circuit.ReasonConsecutiveFailures)
		}
		if h.sent != 7 {
			t.Fatalf("tripped after %d requests, want 7", h.sent)
		}
	})

	t.Run("UncountedClassesNeverTrip", func(t *testing.T) {
		h := newHarness(t, nc, aggressive())
		for _, c := range []circuit.Class{circuit.Throttled, circuit.Blocked, circuit.Gone, circuit.ClientError, circuit.Excluded} {
			h.do(200, c)
		}
		h.wantState(circuit.Closed)
		if s := h.snapshot(); s.WindowLen != 0 {
			t.Fatalf("window holds %d outcomes after only uncounted ones, want 0", s.WindowLen)
		}
	})

	t.Run("ResultsFromBeforeATripAreIgnored", func(t *testing.T) {
		// Requests in flight when the circuit trips describe the same
		// event: they must not re-trip or extend it.
		h := newHarness(t, nc, standard())
		var inFlight []circuit.Ticket
		for range 5 {
			inFlight = append(inFlight, h.allow())
		}
		h.trip()
		tripped := h.snapshot()
		h.advance(time.Second)
		for _, p := range inFlight {
			h.record(p, circuit.Degraded)
		}
		after := h.snapshot()
		if after.Trips != tripped.Trips || !after.RetryAt.Equal(tripped.RetryAt) {
			t.Fatalf("late results changed the open circuit: %+v → %+v", tripped, after)
		}
	})
}
