package circuittest

import (
	"errors"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
)

// NewCircuit makes a fresh circuit for domain with profile p. Each call must
// return an independent circuit (a fresh key prefix for shared stores).
type NewCircuit func(t *testing.T, key string, s circuit.Settings) circuit.Circuit

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
	c      circuit.Circuit
	p      profile
	clk    *clocktest.Fake
	now    time.Time // the fake clock's reading, kept for assertions
	trans  []circuit.Transition
	sent   int
	permit []circuit.Ticket // tickets handed out and not yet recorded
}

func newHarness(t *testing.T, nc NewCircuit, p profile) *harness {
	t.Helper()
	return &harness{t: t, c: nc(t, "shop.test:8080", p.Settings), p: p, clk: clocktest.NewFake(epoch), now: epoch}
}

func (h *harness) advance(d time.Duration) {
	h.clk.Advance(d)
	h.now = h.clk.Now()
}

// allow asks for a ticket and fails the test on a refusal.
func (h *harness) allow() circuit.Ticket {
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
func (h *harness) refused() *circuit.OpenError {
	h.t.Helper()
	_, tr, err := h.c.Allow(h.clk)
	h.note(tr)
	var open *circuit.OpenError
	if !errors.As(err, &open) || !errors.Is(err, circuit.ErrOpen) {
		h.t.Fatalf("Allow after %d requests: got err %v, want a *CircuitOpenError", h.sent, err)
	}
	return open
}

func (h *harness) record(p circuit.Ticket, c circuit.Class) {
	h.t.Helper()
	tr, err := h.c.Record(h.clk, p, circuit.Result{Class: c, Latency: 40 * time.Millisecond})
	if err != nil {
		h.t.Fatalf("Record: %v", err)
	}
	h.note(tr)
}

// do sends n requests one at a time, each ending in class c.
func (h *harness) do(n int, c circuit.Class) {
	h.t.Helper()
	for range n {
		h.record(h.allow(), c)
	}
}

func (h *harness) note(tr circuit.Transition) {
	if tr.From != tr.To {
		h.trans = append(h.trans, tr)
	}
}

func (h *harness) state() circuit.State {
	h.t.Helper()
	s, err := h.c.Snapshot(h.clk)
	if err != nil {
		h.t.Fatalf("Snapshot: %v", err)
	}
	return s.State
}

func (h *harness) snapshot() circuit.Snapshot {
	h.t.Helper()
	s, err := h.c.Snapshot(h.clk)
	if err != nil {
		h.t.Fatalf("Snapshot: %v", err)
	}
	return s
}

func (h *harness) wantState(want circuit.State) {
	h.t.Helper()
	if got := h.state(); got != want {
		h.t.Fatalf("after %d requests: state %s, want %s", h.sent, got, want)
	}
}

// last returns the latest transition, failing if there is none.
func (h *harness) last() circuit.Transition {
	h.t.Helper()
	if len(h.trans) == 0 {
		h.t.Fatal("no transition happened")
	}
	return h.trans[len(h.trans)-1]
}

// trip opens the circuit with consecutive failures on a fresh window.
func (h *harness) trip() {
	h.t.Helper()
	for h.state() == circuit.Closed {
		h.record(h.allow(), circuit.Degraded)
		if h.sent > 10*h.p.WindowSize {
			h.t.Fatal("circuit never tripped")
		}
	}
	h.wantState(circuit.Open)
}

// profile is a named Settings: the circuit settings of package breaker's
// built-in profiles, so the table runs what crawls run.
type profile struct {
	Name string
	circuit.Settings
}

func conservative() profile {
	return profile{"conservative", circuit.Settings{WindowSize: 10, FailureThreshold: 0.6, Cooldown: 300 * time.Second, HalfOpenProbes: 1}}
}

func standard() profile {
	return profile{"standard", circuit.Settings{WindowSize: 20, FailureThreshold: 0.5, Cooldown: 60 * time.Second, HalfOpenProbes: 2}}
}

func aggressive() profile {
	return profile{"aggressive", circuit.Settings{WindowSize: 50, FailureThreshold: 0.35, Cooldown: 30 * time.Second, HalfOpenProbes: 3}}
}
