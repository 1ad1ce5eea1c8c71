package domains

import (
	"testing"
	"time"
)

// A first trip keeps the base cooldown without a draw; a streak grows it
// between the base and base × streak, capped.
func TestGrownCooldown(t *testing.T) {
	never := func() float64 { t.Fatal("drew for a cooldown that does not grow"); return 0 }
	if c, ok := grownCooldown(time.Minute, 10*time.Minute, 1, never); ok || c != time.Minute {
		t.Errorf("first trip: %v, %v; want the base, not grown", c, ok)
	}
	if c, ok := grownCooldown(time.Minute, time.Minute, 5, never); ok || c != time.Minute {
		t.Errorf("no room to grow: %v, %v; want the base, not grown", c, ok)
	}
	for _, tc := range []struct {
		streak int
		draw   float64
		want   time.Duration
	}{
		{3, 0, time.Minute},
		{3, 0.5, 2 * time.Minute},
		{20, 0.5, time.Minute + 9*time.Minute/2}, // capped at 10 minutes
	} {
		if c, ok := grownCooldown(time.Minute, 10*time.Minute, tc.streak, func() float64 { return tc.draw }); !ok || c != tc.want {
			t.Errorf("streak %d, draw %v: %v, %v; want %v, grown", tc.streak, tc.draw, c, ok, tc.want)
		}
	}
}
