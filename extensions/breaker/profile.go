package breaker

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Profile configures the circuit of a domain.
//
// WindowSize is how many of the latest counted outcomes (successes and
// failures) the circuit remembers. It must be at least 1.
//
// FailureThreshold is the failure rate, in (0, 1], at or above which a full
// window trips the circuit. The circuit never trips on rate before the
// window is full, so a few failures at the start of a run are not enough.
//
// ConsecutiveFailures, if above 0, also trips the circuit after that many
// failures in a row, full window or not (seed 002's "three strikes"). 0
// turns the rule off.
//
// Cooldown is how long an open circuit refuses requests before it lets
// probes through. It must be above 0.
//
// HalfOpenProbes is how many probe requests a half-open circuit lets be in
// flight at once, and how many must pass for it to close. It must be at
// least 1. One failed probe re-opens the circuit.
//
// There are no silent defaults: start from Conservative, Standard or
// Aggressive and change what differs. Validate reports the first field that
// is out of range.
type Profile struct {
	Name                string
	WindowSize          int
	FailureThreshold    float64
	ConsecutiveFailures int
	Cooldown            time.Duration
	HalfOpenProbes      int
}

// The profiles from seed 000: which one fits depends on how fragile the
// origin is and how cheap a re-run is.
var (
	// Conservative suits a small, fragile origin with few URLs: tolerate a
	// bad stretch, wait long before probing.
	Conservative = Profile{Name: "conservative", WindowSize: 10, FailureThreshold: 0.6, Cooldown: 300 * time.Second, HalfOpenProbes: 1}
	// Standard suits a typical product crawl.
	Standard = Profile{Name: "standard", WindowSize: 20, FailureThreshold: 0.5, Cooldown: 60 * time.Second, HalfOpenProbes: 2}
	// Aggressive suits high-volume crawls over many domains that are cheap
	// to re-run: a large window detects reliably, a short cooldown costs
	// little.
	Aggressive = Profile{Name: "aggressive", WindowSize: 50, FailureThreshold: 0.35, Cooldown: 30 * time.Second, HalfOpenProbes: 3}
)

// Profiles returns the named profiles by name.
func Profiles() map[string]Profile {
	return map[string]Profile{
		Conservative.Name: Conservative,
		Standard.Name:     Standard,
		Aggressive.Name:   Aggressive,
	}
}

// ProfileByName returns the named profile ("conservative", "standard" or
// "aggressive").
func ProfileByName(name string) (Profile, error) {
	p, ok := Profiles()[name]
	if !ok {
		return Profile{}, fmt.Errorf("%w: unknown profile %q (want conservative, standard or aggressive)", ErrInvalidProfile, name)
	}
	return p, nil
}

// ErrInvalidProfile is wrapped by every error Validate returns.
var ErrInvalidProfile = errors.New("breaker: invalid profile")

// ProfileError says which field of which profile is out of range and why.
type ProfileError struct {
	Profile string
	Field   string
	Value   any
	Reason  string
}

func (e *ProfileError) Error() string {
	name := e.Profile
	if name == "" {
		name = "(unnamed)"
	}
	return fmt.Sprintf("breaker: profile %s: %s = %v: %s", name, e.Field, e.Value, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidProfile) true.
func (e *ProfileError) Unwrap() error { return ErrInvalidProfile }

// Validate reports the first field of p that is out of range, as a
// *ProfileError.
func (p Profile) Validate() error {
	bad := func(field string, v any, reason string) error {
		return &ProfileError{Profile: p.Name, Field: field, Value: v, Reason: reason}
	}
	switch {
	case p.WindowSize < 1:
		return bad("WindowSize", p.WindowSize, "must be at least 1 outcome")
	case math.IsNaN(p.FailureThreshold) || p.FailureThreshold <= 0 || p.FailureThreshold > 1:
		return bad("FailureThreshold", p.FailureThreshold, "must be in (0, 1]: a failure rate, 0.5 trips at half the window failing")
	case p.ConsecutiveFailures < 0:
		return bad("ConsecutiveFailures", p.ConsecutiveFailures, "must be 0 (off) or more")
	case p.Cooldown <= 0:
		return bad("Cooldown", p.Cooldown, "must be above 0: how long an open circuit waits before probing")
	case p.HalfOpenProbes < 1:
		return bad("HalfOpenProbes", p.HalfOpenProbes, "must be at least 1 probe")
	}
	return nil
}
