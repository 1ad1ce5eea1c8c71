// Package clock is the time source Breakwater's logic takes, so tests run
// on a manual clock (clocktest.Fake).
package clock

import "time"

// Clock tells the time and waits for it to pass.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the clock's time once d has
	// passed on it; at once for d ≤ 0.
	After(d time.Duration) <-chan time.Time
}

// System is the wall clock: time.Now and time.After.
var System Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
