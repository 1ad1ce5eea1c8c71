package domains

import (
	"testing"
	"time"
)

// The coarse clock reads the clock on its first use, stays within about a
// tick of it while read, and stops its timer after a tick without a read.
func TestCoarseClock(t *testing.T) {
	var c coarseClock
	within := func(slack time.Duration) {
		t.Helper()
		got := c.Now()
		if d := time.Duration(time.Now().UnixNano() - got); d < 0 || d > slack {
			t.Fatalf("coarse clock %v behind the clock, want at most %v", d, slack)
		}
	}
	within(50 * time.Millisecond) // the first read reads the clock
	deadline := time.Now().Add(coarseTick + coarseTick/2)
	for time.Now().Before(deadline) {
		within(coarseTick + 200*time.Millisecond)
		time.Sleep(coarseTick / 10)
	}
	time.Sleep(2*coarseTick + coarseTick/2) // one tick sees the read, the next none
	if c.armed.Load() {
		t.Fatal("the timer still runs after a tick without a read")
	}
	within(50 * time.Millisecond) // read afresh
}
