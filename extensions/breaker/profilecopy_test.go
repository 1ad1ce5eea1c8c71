package breaker_test

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// A caller that changes the built-in profile it was given must not change
// what any other caller gets.
func TestBuiltinProfilesCannotBeCorrupted(t *testing.T) {
	want := breaker.Standard().Cooldown
	mine := breaker.Standard()
	mine.Cooldown = time.Nanosecond
	if got := breaker.Standard().Cooldown; got != want {
		t.Errorf("Standard().Cooldown = %v after one caller changed its own; want %v", got, want)
	}
}
