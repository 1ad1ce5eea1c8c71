package domains

import (
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// The built-in profiles, which breaker.Conservative, breaker.Standard and
// breaker.Aggressive return and document. Each call returns a fresh copy.

// Conservative is breaker.Conservative.
func Conservative() circuit.Profile {
	return circuit.Profile{Name: "conservative", WindowSize: 10, FailureThreshold: 0.6, Cooldown: 300 * time.Second, HalfOpenProbes: 1,
		SlopeMultiple: 3, SlopeFloor: 200 * time.Millisecond, MaxCooldown: 30 * time.Minute}
}

// Standard is breaker.Standard.
func Standard() circuit.Profile {
	return circuit.Profile{Name: "standard", WindowSize: 20, FailureThreshold: 0.5, Cooldown: 60 * time.Second, HalfOpenProbes: 2,
		SlowCall: 5 * time.Second, SlowCallRate: 0.8, SlopeMultiple: 3, SlopeFloor: 200 * time.Millisecond,
		MaxCooldown: 10 * time.Minute, TimeoutMultiple: 4, TimeoutFloor: time.Second, TimeoutAfter: 20}
}

// Aggressive is breaker.Aggressive.
func Aggressive() circuit.Profile {
	return circuit.Profile{Name: "aggressive", WindowSize: 50, FailureThreshold: 0.35, Cooldown: 30 * time.Second, HalfOpenProbes: 3,
		SlowCall: 3 * time.Second, SlowCallRate: 0.6, SlopeMultiple: 2.5, SlopeFloor: 100 * time.Millisecond, SlopeTrip: true,
		MaxCooldown: 5 * time.Minute, TimeoutMultiple: 3, TimeoutFloor: 500 * time.Millisecond, TimeoutAfter: 20}
}
