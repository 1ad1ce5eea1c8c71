package breakertest

import (
	"errors"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// NewCircuit makes a fresh circuit for domain with profile p. Each call must
// return an independent circuit (a fresh key prefix for shared stores).
type NewCircuit func(t *testing.T, domain string, p breaker.Profile) breaker.Circuit

// Run runs every table.
func Run(t *testing.T, newCircuit NewCircuit) {
	t.Run("Closed", func(t *testing.T) { RunClosed(t, newCircuit) })
	t.Run("Open", func(t *testing.T) { RunOpen(t, newCircuit) })
	t.Run("HalfOpen", func(t *testing.T) { RunHalfOpen(t, newCircuit) })
}

// epoch is where every harness's time starts.
var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// harness drives one circuit with a manual time.
type harness struct {
	t      *testing.T
	c      breaker.Circuit
	p      breaker.Profile
	clk    *clock.Fake
	now    time.Time // the fake clock's reading, kept for assertions
	trans  []breaker.Transition
	sent   int
	permit []breaker.Ticket // tickets handed out and not yet recorded
}

func newHarness(t *testing.T, nc NewCircuit, p breaker.Profile) *harness {
	t.Helper()
	return &harness{t: t, c: nc(t, "shop.test:8080", p), p: p, clk: clock.NewFake(epoch), now: epoch}
}

func (h *harness) advance(d time.Duration) {
	h.clk.Advance(d)
	h.now = h.clk.Now()
}

// allow asks for a ticket and fails the test on a refusal.
func (h *harness) allow() breaker.Ticket {
	h.t.Helper()
	p, tr, err := h.c.Allow(h.clk)
	if err != nil {
		h.t.Fatalf("Allow after %d requests: refused: %v", h.sent, err)
	}
	h.note(tr)
	h.sent++
	return p
}

// refused asserts Allow refuses, and returns the refusal.
func (h *harness) refused() *breaker.CircuitOpenError {
	h.t.Helper()
	_, tr, err := h.c.Allow(h.clk)
	h.note(tr)
	var open *breaker.CircuitOpenError
	if !errors.As(err, &open) || !errors.Is(err, breaker.ErrOpen) {
		h.t.Fatalf("Allow after %d requests: got err %v, want a *CircuitOpenError", h.sent, err)
	}
	return open
}

func (h *harness) record(p breaker.Ticket, c breaker.Class) {
	h.t.Helper()
	tr, err := h.c.Record(h.clk, p, breaker.Result{Class: c, Latency: 40 * time.Millisecond})
	if err != nil {
		h.t.Fatalf("Record: %v", err)
	}
	h.note(tr)
}

// do sends n requests one at a time, each ending in class c.
func (h *harness) do(n int, c breaker.Class) {
	h.t.Helper()
	for range n {
		h.record(h.allow(), c)
	}
}

func (h *harness) note(tr breaker.Transition) {
	if tr.From != tr.To {
		h.trans = append(h.trans, tr)
	}
}

func (h *harness) state() breaker.State {
	h.t.Helper()
	s, err := h.c.Snapshot(h.clk)
	if err != nil {
		h.t.Fatalf("Snapshot: %v", err)
	}
	return s.State
}

func (h *harness) snapshot() breaker.DomainSnapshot {
	h.t.Helper()
	s, err := h.c.Snapshot(h.clk)
	if err != nil {
		h.t.Fatalf("Snapshot: %v", err)
	}
	return s
}

func (h *harness) wantState(want breaker.State) {
	h.t.Helper()
	if got := h.state(); got != want {
		h.t.Fatalf("after %d requests: state %s, want %s", h.sent, got, want)
	}
}

// last returns the latest transition, failing if there is none.
func (h *harness) last() breaker.Transition {
	h.t.Helper()
	if len(h.trans) == 0 {
		h.t.Fatal("no transition happened")
	}
	return h.trans[len(h.trans)-1]
}

// trip opens the circuit with consecutive failures on a fresh window.
func (h *harness) trip() {
	h.t.Helper()
	for h.state() == breaker.Closed {
		h.record(h.allow(), breaker.Degraded)
		if h.sent > 10*h.p.WindowSize {
			h.t.Fatal("circuit never tripped")
		}
	}
	h.wantState(breaker.Open)
}
