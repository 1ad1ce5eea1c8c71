package breaker

import (
	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/early"
)

// Profile configures the circuit of a domain and the early warnings
// beside it (slow calls, the latency slope, a growing cooldown, the
// adaptive timeout). Start from Conservative(), Standard() or Aggressive()
// and change what differs; Validate reports the first field out of range.
// circuit.Profile documents every field.
type Profile = circuit.Profile

// ProfileError says which field of which profile is out of range, and
// why (circuit.ProfileError).
type ProfileError = circuit.ProfileError

// ErrInvalidProfile is wrapped by every error Profile.Validate returns.
var ErrInvalidProfile = circuit.ErrInvalidProfile

// Conservative suits a small, fragile origin with few URLs
// (circuit.Conservative).
func Conservative() Profile { return circuit.Conservative() }

// Standard suits a typical product crawl (circuit.Standard).
func Standard() Profile { return circuit.Standard() }

// Aggressive suits high-volume crawls over many domains that are cheap to
// re-run (circuit.Aggressive).
func Aggressive() Profile { return circuit.Aggressive() }

// Profiles returns the built-in profiles by name ("conservative",
// "standard", "aggressive"): a new map of fresh copies at each call.
func Profiles() map[string]Profile { return circuit.Profiles() }

// earlySettings is the part of p the early warnings read.
func earlySettings(p Profile) early.Settings {
	return early.Settings{WindowSize: p.WindowSize, SlowCall: p.SlowCall, SlowCallRate: p.SlowCallRate,
		SlopeMultiple: p.SlopeMultiple, SlopeFloor: p.SlopeFloor, TimeoutMultiple: p.TimeoutMultiple,
		TimeoutAfter: p.TimeoutAfter, TimeoutFloor: p.TimeoutFloor}
}
