package breaker_test

import (
	"github.com/breakwater-crawl/breakwater/circuit"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// A caller that changes the built-in profile it was given must not change
// what any other caller gets, through Standard() or through Profiles().
func TestBuiltinProfilesCannotBeCorrupted(t *testing.T) {
	want := breaker.Standard().Cooldown
	mine := breaker.Standard()
	mine.Cooldown = time.Nanosecond
	all := circuit.Profiles()
	all["standard"] = mine
	delete(all, "aggressive")
	if got := breaker.Standard().Cooldown; got != want {
		t.Errorf("Standard().Cooldown = %v after one caller changed its own; want %v", got, want)
	}
	again := circuit.Profiles()
	if got := again["standard"].Cooldown; got != want {
		t.Errorf("Profiles()[standard].Cooldown = %v after one caller changed its map; want %v", got, want)
	}
	if _, ok := again["aggressive"]; !ok || len(again) != 3 {
		t.Errorf("Profiles() = %d profiles after one caller deleted from its map; want all 3", len(again))
	}
}
