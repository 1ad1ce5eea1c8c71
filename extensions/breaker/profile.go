package breaker

import (
	"github.com/breakwater-crawl/breakwater/circuit"
)

// Profile configures the circuit of a domain and the early warnings
// beside it (slow calls, the latency slope, a growing cooldown, the
// adaptive timeout). Start from Conservative(), Standard() or Aggressive()
// and change what differs; Validate reports the first field out of range.
// circuit.Profile documents every field.
type Profile = circuit.Profile

// ErrInvalidProfile is wrapped by every error Profile.Validate returns, a
// *circuit.ProfileError.
var ErrInvalidProfile = circuit.ErrInvalidProfile

// Conservative suits a small, fragile origin with few URLs
// (circuit.Conservative).
func Conservative() Profile { return circuit.Conservative() }

// Standard suits a typical product crawl (circuit.Standard).
func Standard() Profile { return circuit.Standard() }

// Aggressive suits high-volume crawls over many domains that are cheap to
// re-run (circuit.Aggressive).
func Aggressive() Profile { return circuit.Aggressive() }
