package domains

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
)

// A restored window holds what was saved, never a trip's worth of
// failures; the probation is a full window one failure short of a trip.
func TestRestoreWindow(t *testing.T) {
	standard := circuit.Settings{WindowSize: 20, FailureThreshold: 0.5, Cooldown: time.Minute, HalfOpenProbes: 2}
	strikes := standard
	strikes.ConsecutiveFailures = 3
	for _, tc := range []struct {
		name               string
		s                  circuit.Settings
		outcomes, failures int
		wantLen, wantFails int
	}{
		{"as saved", standard, 12, 4, 12, 4},
		{"capped below a trip", standard, 20, 15, 20, 9},
		{"capped to the window", standard, 50, 3, 20, 3},
		{"probation", standard, 0, -1, 20, 9},
		{"consecutive failures", strikes, 20, 5, 20, 2},
		{"more failures than outcomes", standard, 2, 5, 5, 5},
	} {
		clk := clocktest.NewFake(time.Unix(1_800_000_000, 0))
		c := circuit.NewLocal("shop.test", &tc.s, nil)
		if err := restoreWindow(c, clk, tc.s, tc.outcomes, tc.failures); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		snap, _ := c.Snapshot(clk)
		if snap.State != circuit.Closed || snap.WindowLen != tc.wantLen || snap.WindowFailures != tc.wantFails {
			t.Errorf("%s: %v with %d outcomes, %d failures; want closed with %d, %d", tc.name, snap.State, snap.WindowLen, snap.WindowFailures, tc.wantLen, tc.wantFails)
		}
	}
}
