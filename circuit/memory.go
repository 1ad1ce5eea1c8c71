package circuit

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/internal/window"
)

// Local is the in-process Circuit, with the paths its owner may take
// past the interface: a caller that keeps state beside the circuit (the
// breaker's domain set, the proxy pool) allows and records a closed
// circuit's results without the Transition the interface returns.
type Local interface {
	Circuit
	// TryAllow hands out a ticket if the circuit is closed, taking no
	// lock; false: call Allow.
	TryAllow() (Ticket, bool)
	// TryRecordLocked records o for ticket p, as Record does, when it
	// cannot move the circuit: a result that is not a failure on a closed
	// circuit, or any result of a stale ticket. It reports whether it did;
	// if not, nothing is recorded and the caller calls Record, which
	// returns the Transition. The caller holds the mutex given to NewLocal.
	TryRecordLocked(p Ticket, o Result) bool
	// OutcomesLocked returns the outcomes in the window, oldest first, in
	// a new slice; the caller holds the mutex given to NewLocal.
	OutcomesLocked() []Result
}

// memory is the in-process Circuit. Its closed Allow takes no lock. The
// fields a closed Allow and Record touch come first.
type memory struct {
	// closedGen is gen<<1 | 1 while the circuit is closed, 0 otherwise:
	// the closed Allow reads it without the lock.
	closedGen atomic.Uint64
	// issued counts the tickets handed out: the order the window keeps
	// outcomes in (window.Ordered).
	issued atomic.Uint64
	mu     *sync.Mutex // its own, or the caller's (NewLocal's mu)
	gen    uint64
	consec int32
	// failures mirrors win.Failures for WindowFailures, without the lock.
	failures atomic.Int32
	win      window.Ordered[packed]

	key     string
	s       *Settings // shared, never written
	retryAt int64     // unix nanoseconds (8 bytes, not a time.Time's 24); the wall clock decides
	probes  int32     // probes in flight
	passed  int32     // probes passed this half-open round
	trips   int32
	state   State
	// 128 bytes, a size class: no mutex of its own inside (a circuit
	// without a caller's gets one beside it), no failures-to-trip
	// (s.FailuresToTrip, on a failure's path only), and a window that
	// tells failures by packed's method, not by a func it holds.
}

// NewLocal returns a closed circuit for key deciding with *s, which the
// caller has validated (MemoryStore.Circuit validates it) and never
// changes: the circuits of one profile share it. A caller that
// keeps state of its own beside the circuit may guard both with one
// mutex, mu: the circuit locks mu, and the caller, holding mu, records
// with TryRecordLocked, so that one lock, not two, covers a result.
// Nothing else of the circuit's may be called with mu held. A nil mu
// gives the circuit its own lock.
func NewLocal(key string, s *Settings, mu *sync.Mutex) Local {
	c := &memory{key: key, s: s, win: window.NewOrdered[packed](s.WindowSize), mu: mu}
	if c.mu == nil {
		c.mu = new(sync.Mutex)
	}
	c.closedGen.Store(1) // closed, generation 0
	return c
}

// Allow asks to send one request now (Circuit).
func (c *memory) Allow(clk clock.Clock) (Ticket, Transition, error) {
	if t, ok := c.TryAllow(); ok {
		return t, Transition{}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == Closed {
		return Ticket{Gen: c.gen, Seq: c.issued.Add(1)}, Transition{}, nil
	}
	now := clk.Now()
	switch c.state {
	case Open:
		if now.UnixNano() < c.retryAt {
			return Ticket{}, Transition{}, &OpenError{Key: c.key, State: Open, RetryAt: c.retryTime()}
		}
		t := c.moveLocked(now, HalfOpen, ReasonCooldownElapsed, nil)
		c.probes = 1
		return Ticket{Gen: c.gen, Probe: true}, t, nil
	default: // HalfOpen
		if int(c.probes) >= c.s.HalfOpenProbes {
			return Ticket{}, Transition{}, &OpenError{Key: c.key, State: HalfOpen, RetryAt: now.Add(c.s.Cooldown)}
		}
		c.probes++
		return Ticket{Gen: c.gen, Probe: true}, Transition{}, nil
	}
}

// TryAllow is Allow's closed path alone (Local). A caller that holds a
// Local spares its hot path the Transition Allow returns (some 140 bytes
// zeroed and copied on every call).
func (c *memory) TryAllow() (Ticket, bool) {
	// A ticket taken just as the circuit trips is a request in flight at
	// the trip, and its result is ignored by generation like every other.
	if g := c.closedGen.Load(); g != 0 {
		return Ticket{Gen: g >> 1, Seq: c.issued.Add(1)}, true
	}
	return Ticket{}, false
}

// TryRecordLocked records o when it cannot move the circuit (Local).
func (c *memory) TryRecordLocked(p Ticket, o Result) bool {
	switch {
	case o.Class.Failure():
		return false
	case p.Gen != c.gen: // stale: the circuit already moved on
	case c.state == Closed:
		c.addLocked(p, o)
	default:
		return false
	}
	return true
}

// Record gives back a ticket with its result (Circuit).
func (c *memory) Record(clk clock.Clock, p Ticket, o Result) (Transition, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.Gen != c.gen {
		return Transition{}, nil // stale: the circuit already moved on
	}
	switch c.state {
	case Closed:
		c.addLocked(p, o)
		switch {
		case !o.Class.Failure():
		case int(c.win.Failures) >= c.s.FailuresToTrip():
			return c.tripLocked(clk.Now(), ReasonFailureRate, c.outcomesLocked()), nil
		case c.s.ConsecutiveFailures > 0 && int(c.consec) >= c.s.ConsecutiveFailures:
			return c.tripLocked(clk.Now(), ReasonConsecutiveFailures, c.outcomesLocked()), nil
		}
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
			if int(c.passed) >= c.s.HalfOpenProbes {
				return c.moveLocked(clk.Now(), Closed, ReasonProbesPassed, nil), nil
			}
		}
		// Not counted (throttled, gone, cancelled…): the slot is free for
		// another probe.
	}
	return Transition{}, nil
}

// addLocked puts o, the result of ticket p of the current generation, in
// the closed circuit's window, and counts the failures in a row.
func (c *memory) addLocked(p Ticket, o Result) {
	if !o.Class.Counted() {
		return
	}
	seq := p.Seq
	if seq == 0 { // a ticket made by hand: as if issued now
		seq = c.issued.Add(1)
	}
	c.win.Add(pack(o), seq)
	if f := c.win.Failures; f != c.failures.Load() {
		c.failures.Store(f) // only on change: a store is a locked instruction, a load is not
	}
	if o.Class.Failure() {
		c.consec++
	} else {
		c.consec = 0
	}
}

// Snapshot reads the circuit's state; it never fails.
func (c *memory) Snapshot(clock.Clock) (Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Snapshot{Key: c.key, State: c.state, RetryAt: c.retryTime(), Trips: int(c.trips),
		WindowLen: int(c.win.N), WindowFailures: int(c.win.Failures), ProbesInFlight: int(c.probes)}, nil
}

// RestoreOpen puts back a saved state (Circuit).
func (c *memory) RestoreOpen(clk clock.Clock, retryAt time.Time, trips int) (Transition, error) {
	c.mu.Lock()
	c.trips = max(c.trips, int32(min(trips, math.MaxInt32)))
	c.mu.Unlock()
	return c.HoldOpen(clk, retryAt, ReasonRestored)
}

// HoldOpen opens the circuit until until (Circuit).
func (c *memory) HoldOpen(clk clock.Clock, until time.Time, reason string) (Transition, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := clk.Now()
	if !until.After(now) {
		return Transition{}, nil
	}
	if c.state == Open {
		if until.UnixNano() > c.retryAt {
			c.retryAt = until.UnixNano()
		}
		return Transition{}, nil
	}
	if CountsAsTrip(reason) {
		c.trips++
	}
	return c.openLocked(now, until, reason, c.outcomesLocked()), nil
}

func (c *memory) tripLocked(now time.Time, reason string, evidence []Result) Transition {
	c.trips++
	return c.openLocked(now, now.Add(c.s.Cooldown), reason, evidence)
}

// openLocked opens the circuit until until.
func (c *memory) openLocked(now, until time.Time, reason string, evidence []Result) Transition {
	t := c.moveLocked(now, Open, reason, evidence)
	c.retryAt, t.RetryAt = until.UnixNano(), until
	return t
}

// OutcomesLocked returns the window's outcomes (Local).
func (c *memory) OutcomesLocked() []Result { return c.outcomesLocked() }

// WindowFailures returns the failures in the circuit's window now,
// without a lock: a caller keeps at most FailuresToTrip − WindowFailures
// requests in flight, so the circuit is always there to stop the next.
func (c *memory) WindowFailures() int { return int(c.failures.Load()) }

// Pause does nothing: an in-process circuit has no other user to hold
// off, and its caller waits out the pause on its own (Circuit).
func (c *memory) Pause(clock.Clock, time.Time) error { return nil }

// moveLocked changes state, starts a new generation with an empty window
// and describes the change. Every state change goes through here.
func (c *memory) moveLocked(now time.Time, to State, reason string, evidence []Result) Transition {
	t := Transition{Key: c.key, From: c.state, To: to, At: now, Reason: reason, Window: evidence,
		FailureRate: FailureRate(evidence), MedianLatency: MedianLatency(evidence)}
	c.state = to
	c.gen++
	c.probes, c.passed, c.consec = 0, 0, 0
	c.win.Reset()
	c.failures.Store(0)
	if to == Closed {
		c.closedGen.Store(c.gen<<1 | 1)
	} else {
		c.closedGen.Store(0)
	}
	t.Trips = int(c.trips)
	return t
}

// retryTime is when an open circuit may be probed; the zero time if it
// never opened.
func (c *memory) retryTime() time.Time {
	if c.retryAt == 0 {
		return time.Time{}
	}
	return time.Unix(0, c.retryAt)
}

// outcomesLocked returns the window's outcomes, oldest first, in a new
// slice.
func (c *memory) outcomesLocked() []Result {
	ps := c.win.Outcomes()
	out := make([]Result, len(ps))
	for i, p := range ps {
		out[i] = p.result()
	}
	return out
}

// packed is a Result in one word, as the window holds it (with its
// ticket's order, 16 bytes an outcome, not 24): the class in the top 8
// bits, the latency in the 56 below (2.2 years of nanoseconds).
type packed uint64

const latencyBits = 56

func pack(r Result) packed {
	return packed(min(max(r.Latency, 0), 1<<latencyBits-1)) | packed(r.Class)<<latencyBits
}

func (p packed) result() Result {
	return Result{Class: Class(p >> latencyBits), Latency: time.Duration(p & (1<<latencyBits - 1))}
}

// Failed says whether p is a failure (window.Outcome).
func (p packed) Failed() bool { return Class(p >> latencyBits).Failure() }
