package circuit_test

import (
	"sync"
	"testing"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/circuit/circuittest"
	"github.com/breakwater-crawl/breakwater/clock"
)

// TestMemory runs the table every Circuit must pass against the
// in-process circuit.
func TestMemory(t *testing.T) {
	circuittest.Run(t, func(t *testing.T, key string, s circuit.Settings) circuit.Circuit {
		c, err := circuit.MemoryStore{}.Circuit(key, s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}

// guarded is a Memory sharing its caller's mutex, recorded as such a
// caller records: TryRecordLocked under the mutex, Record when it
// declines.
type guarded struct {
	circuit.Local
	mu *sync.Mutex
}

func (c guarded) Allow(clk clock.Clock) (circuit.Ticket, circuit.Transition, error) {
	if t, ok := c.TryAllow(); ok {
		return t, circuit.Transition{}, nil
	}
	return c.Local.Allow(clk)
}

func (c guarded) Record(clk clock.Clock, t circuit.Ticket, r circuit.Result) (circuit.Transition, error) {
	c.mu.Lock()
	ok := c.TryRecordLocked(t, r)
	c.mu.Unlock()
	if ok {
		return circuit.Transition{}, nil
	}
	return c.Local.Record(clk, t, r)
}

// TestMemoryGuarded runs the same table against a circuit that locks its
// caller's mutex.
func TestMemoryGuarded(t *testing.T) {
	circuittest.Run(t, func(t *testing.T, key string, s circuit.Settings) circuit.Circuit {
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		mu := new(sync.Mutex)
		return guarded{circuit.NewLocal(key, &s, mu), mu}
	})
}
