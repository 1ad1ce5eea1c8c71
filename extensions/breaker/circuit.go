package breaker

// This file is the state machine: plain Go, no Colly, the clock passed in
// by the caller. The Colly wiring is colly.go.

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/internal/circuit"
)

// restorer and holder are the optional methods the breaker looks for on a
// Circuit (see Circuit).
type (
	restorer = circuit.Restorer[Transition]
	holder   = circuit.Holder[Transition]
)

// Circuit is one domain's three-state breaker. The in-process circuit
// (MemoryStore) and storage/redis's shared circuit implement it with the
// same semantics; breakertest runs one table against both. The caller passes its
// clock in, so the circuit has none of its own; the in-process circuit reads
// it only when the decision depends on time (never on the closed hot path).
//
// A Circuit may also have these two methods; the breaker looks for them by
// their signatures:
//
//	// RestoreOpen opens the circuit until retryAt, counting trips trips so
//	// far; a retryAt in the past leaves it closed (Breaker.Restore).
//	RestoreOpen(clk clock.Clock, retryAt time.Time, trips int) (Transition, error)
//	// HoldOpen opens a closed or half-open circuit (a new generation, its
//	// window cleared) until until, or keeps an open one open at least that
//	// long, never shorter (Breaker.HoldOpen).
//	HoldOpen(clk clock.Clock, until time.Time, reason string) (Transition, error)
//
// Without RestoreOpen, Breaker.Restore returns an error for a circuit
// saved open; without HoldOpen, Breaker.HoldOpen does, and the decisions
// taken outside the window (a latency slope, slow calls, a fleet-wide
// pause, a grown cooldown) leave the circuit as it is. A Circuit returns
// the zero Transition (From == To) when nothing moved.
type Circuit interface {
	// Allow asks to send one request now. It returns a Ticket (its Gen
	// and Probe set), or a *CircuitOpenError. An open circuit whose
	// cooldown has passed moves to half-open and Allow returns that
	// Transition.
	Allow(clk clock.Clock) (Ticket, Transition, error)
	// Record gives back a ticket with the attempt's result. Counted
	// results enter the window; others only free a probe slot. It returns
	// the Transition the result caused, if any.
	Record(clk clock.Clock, t Ticket, r Result) (Transition, error)
	// Snapshot reads the circuit's state without changing it: the
	// domain, State, RetryAt, Trips, WindowLen, WindowFailures and
	// ProbesInFlight (the breaker fills in the rest).
	Snapshot(clk clock.Clock) (DomainSnapshot, error)
}

// memCircuit is the in-process Circuit.
type memCircuit struct {
	domain string
	p      Profile
	need   int // failures in a full window that trip it

	// closedGen is gen<<1 | 1 while the circuit is closed, 0 otherwise:
	// the closed Allow reads it without the lock.
	closedGen atomic.Uint64
	// failures mirrors win.failures for WindowFailures, without the lock.
	failures atomic.Int32
	// issued counts the tickets handed out: the order the window keeps
	// outcomes in (window.addIssued).
	issued atomic.Uint64

	mu      sync.Mutex
	state   State
	gen     uint64
	win     window
	consec  int
	retryAt time.Time
	probes  int // probes in flight
	passed  int // probes passed this half-open round
	trips   int
}

func newMemCircuit(domain string, p Profile) *memCircuit {
	c := &memCircuit{domain: domain, p: p, need: failuresToTrip(p), win: newWindow(p.WindowSize)}
	c.closedGen.Store(1) // closed, generation 0
	return c
}

func (c *memCircuit) Allow(clk clock.Clock) (Ticket, Transition, error) {
	// Closed: no lock. A ticket taken just as the circuit trips is a
	// request in flight at the trip, and its result is ignored by
	// generation like every other.
	if g := c.closedGen.Load(); g != 0 {
		return Ticket{Gen: g >> 1, seq: c.issued.Add(1)}, Transition{}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == Closed {
		return Ticket{Gen: c.gen, seq: c.issued.Add(1)}, Transition{}, nil
	}
	now := clk.Now()
	switch c.state {
	case Open:
		if now.Before(c.retryAt) {
			return Ticket{}, Transition{}, &CircuitOpenError{Domain: c.domain, State: Open, RetryAt: c.retryAt}
		}
		t := c.moveLocked(now, HalfOpen, ReasonCooldownElapsed, nil)
		c.probes = 1
		return Ticket{Gen: c.gen, Probe: true}, t, nil
	default: // HalfOpen
		if c.probes >= c.p.HalfOpenProbes {
			return Ticket{}, Transition{}, &CircuitOpenError{Domain: c.domain, State: HalfOpen, RetryAt: now.Add(c.p.Cooldown)}
		}
		c.probes++
		return Ticket{Gen: c.gen, Probe: true}, Transition{}, nil
	}
}

func (c *memCircuit) Record(clk clock.Clock, p Ticket, o Result) (Transition, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.Gen != c.gen {
		return Transition{}, nil // stale: the circuit already moved on
	}
	switch c.state {
	case Closed:
		if !o.Class.Counted() {
			return Transition{}, nil
		}
		seq := p.seq
		if seq == 0 { // a ticket made by hand: as if issued now
			seq = c.issued.Add(1)
		}
		c.win.addIssued(o, seq)
		c.failures.Store(int32(c.win.failures))
		if !o.Class.Failure() {
			c.consec = 0
			return Transition{}, nil
		}
		c.consec++
		switch {
		case c.win.failures >= c.need:
			return c.tripLocked(clk.Now(), ReasonFailureRate, c.win.outcomes()), nil
		case c.p.ConsecutiveFailures > 0 && c.consec >= c.p.ConsecutiveFailures:
			return c.tripLocked(clk.Now(), ReasonConsecutiveFailures, c.win.outcomes()), nil
		}
		return Transition{}, nil
	case HalfOpen:
		if !p.Probe {
			return Transition{}, nil
		}
		c.probes--
		switch {
		case o.Class.Failure():
			return c.tripLocked(clk.Now(), ReasonProbeFailed, []Result{o}), nil
		case o.Class == Success:
			c.passed++
			if c.passed >= c.p.HalfOpenProbes {
				c.win.reset()
				c.consec = 0
				return c.moveLocked(clk.Now(), Closed, ReasonProbesPassed, nil), nil
			}
		}
		// Not counted (throttled, gone, cancelled…): the slot is free for
		// another probe.
	}
	return Transition{}, nil
}

func (c *memCircuit) Snapshot(clock.Clock) (DomainSnapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return DomainSnapshot{Domain: c.domain, State: c.state, RetryAt: c.retryAt, Trips: c.trips,
		WindowLen: c.win.n, WindowFailures: c.win.failures, ProbesInFlight: c.probes}, nil
}

func (c *memCircuit) RestoreOpen(clk clock.Clock, retryAt time.Time, trips int) (Transition, error) {
	c.mu.Lock()
	c.trips = max(c.trips, trips)
	c.mu.Unlock()
	return c.HoldOpen(clk, retryAt, ReasonRestored)
}

func (c *memCircuit) HoldOpen(clk clock.Clock, until time.Time, reason string) (Transition, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := clk.Now()
	if !until.After(now) {
		return Transition{}, nil
	}
	if c.state == Open {
		if until.After(c.retryAt) {
			c.retryAt = until
		}
		return Transition{}, nil
	}
	if countsAsTrip(reason) {
		c.trips++
	}
	t := c.moveLocked(now, Open, reason, c.win.outcomes())
	c.win.reset()
	c.consec = 0
	c.retryAt = until
	t.RetryAt = until
	return t, nil
}

// countsAsTrip says whether opening for reason is the site's failure: a
// restored state, a fleet-wide pause or sustained throttling is not a new
// trip.
func countsAsTrip(reason string) bool {
	return reason != ReasonRestored && reason != ReasonFleetPause && reason != ReasonThrottleHorizon
}

func (c *memCircuit) tripLocked(now time.Time, reason string, evidence []Result) Transition {
	c.trips++
	c.retryAt = now.Add(c.p.Cooldown)
	t := c.moveLocked(now, Open, reason, evidence)
	c.win.reset()
	c.consec = 0
	t.RetryAt = c.retryAt
	return t
}

// WindowFailures returns the failures in the circuit's window now. The
// breaker's gate reads it, without a lock, to keep at most
// failuresToTrip − WindowFailures requests in flight.
func (c *memCircuit) WindowFailures() int { return int(c.failures.Load()) }

// moveLocked changes state, starts a new generation and describes the
// change. Every state change goes through here.
func (c *memCircuit) moveLocked(now time.Time, to State, reason string, evidence []Result) Transition {
	t := Transition{Domain: c.domain, From: c.state, To: to, At: now, Reason: reason, Window: evidence,
		FailureRate: failureRate(evidence), MedianLatency: medianSuccessLatency(evidence)}
	c.state = to
	c.gen++
	c.probes, c.passed = 0, 0
	c.failures.Store(0) // every state change starts from an empty window
	if to == Closed {
		c.closedGen.Store(c.gen<<1 | 1)
	} else {
		c.closedGen.Store(0)
	}
	t.Trips = c.trips
	return t
}
