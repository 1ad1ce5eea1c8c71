package circuit

import (
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
)

// Circuit is one key's three-state breaker. The in-process circuit
// (MemoryStore) and storage/redis's shared circuit implement it with the
// same semantics; package circuittest runs one table against both. The
// caller passes its clock in, so a circuit has none of its own. A method
// returns the zero Transition (From == To) when nothing moved.
type Circuit interface {
	// Allow asks to send one request now. It returns a Ticket, or an
	// *OpenError. An open circuit whose cooldown has passed moves to
	// half-open and Allow returns that Transition.
	Allow(clk clock.Clock) (Ticket, Transition, error)
	// Record gives back a ticket with the attempt's result. Counted
	// results enter the window; others only free a probe slot. It
	// returns the Transition the result caused, if any.
	Record(clk clock.Clock, t Ticket, r Result) (Transition, error)
	// Snapshot reads the circuit's state without changing it.
	Snapshot(clk clock.Clock) (Snapshot, error)
	// HoldOpen opens a closed or half-open circuit (a new generation, its
	// window cleared) until until, for a reason decided outside the
	// window (a latency slope, slow calls, a fleet-wide pause); an open
	// one stays open at least that long, never shorter.
	HoldOpen(clk clock.Clock, until time.Time, reason string) (Transition, error)
	// RestoreOpen puts back a saved state, so a restart is no way around
	// a cooldown: it counts trips trips so far and opens the circuit
	// until retryAt; a retryAt in the past leaves it closed.
	RestoreOpen(clk clock.Clock, retryAt time.Time, trips int) (Transition, error)
	// Pause tells every other user of the circuit to send nothing until
	// until: the key answered Retry-After. The caller waits on its own.
	// A shared circuit refuses the others meanwhile (a closed
	// *OpenError); an in-process one has no others, and does nothing.
	Pause(clk clock.Clock, until time.Time) error
	// WindowFailures is how many failures the window holds as far as this
	// process knows, without a round trip: what the caller's room for
	// requests in flight is judged by. A shared circuit counts the
	// results this process recorded since the circuit last moved.
	WindowFailures() int
}

// Ticket is what Allow hands out and Record takes back.
type Ticket struct {
	// Gen is the circuit's generation when the ticket was issued: a result
	// from an earlier generation (the circuit has moved since) is ignored.
	Gen uint64
	// Probe is set on a half-open circuit's probes.
	Probe bool
	// Seq is the order the ticket was issued in, so the window keeps
	// outcomes in the order their requests left, whatever order they are
	// recorded in. 0 records as if issued at Record.
	Seq uint64
}

// Snapshot is a circuit's state at one moment.
type Snapshot struct {
	Key            string
	State          State
	RetryAt        time.Time // when an open circuit may be probed
	Trips          int       // how many times it has opened
	WindowLen      int       // outcomes held in the window
	WindowFailures int       // failures among them
	ProbesInFlight int
}

// Store makes the circuit of each key.
type Store interface {
	// Circuit returns the circuit for key, deciding with s (already
	// validated). A caller calls it once per key.
	Circuit(key string, s Settings) (Circuit, error)
}

// MemoryStore keeps every circuit in this process: its circuits are
// Local.
type MemoryStore struct{}

// Circuit returns a new in-process circuit.
func (MemoryStore) Circuit(key string, s Settings) (Circuit, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return NewLocal(key, &s, nil), nil
}
