package circuit_test

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/circuit/circuittest"
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
