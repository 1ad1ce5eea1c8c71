package circuit_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
)

// A key that keeps failing is refused after FailuresToTrip failures, and
// probed again once the cooldown has passed.
func Example() {
	s := circuit.Settings{WindowSize: 20, FailureThreshold: 0.5, Cooldown: time.Minute, HalfOpenProbes: 1}
	c, err := circuit.MemoryStore{}.Circuit("shop.example", s)
	if err != nil {
		fmt.Println(err)
		return
	}
	clk := clocktest.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	sent := 0
	for {
		t, _, err := c.Allow(clk)
		if errors.Is(err, circuit.ErrOpen) {
			fmt.Println("refused:", err)
			break
		}
		sent++
		c.Record(clk, t, circuit.Result{Class: circuit.Degraded, Latency: 30 * time.Second})
	}
	fmt.Println("sent before the trip:", sent, "of", s.FailuresToTrip())
	clk.Advance(time.Minute)
	_, tr, _ := c.Allow(clk)
	fmt.Println(tr.From, "→", tr.To, tr.Reason)
	// Output:
	// refused: breaker: circuit for shop.example is open; it may be probed again at 2026-12-01T12:01:00Z
	// sent before the trip: 10 of 10
	// open → half-open cooldown_elapsed
}
