package circuit

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Profile configures the circuit of a domain (or any key) and the early
// warnings a caller keeps beside it. There are no silent defaults: start
// from one of the breaker's (breaker.Conservative, breaker.Standard or
// breaker.Aggressive, package extensions/breaker) and change what differs.
// Fields past HalfOpenProbes are off at their zero value.
type Profile struct {
	Name string
	// WindowSize is how many of the latest counted outcomes the circuit
	// remembers (at least 1).
	WindowSize int
	// FailureThreshold, in (0, 1], trips the circuit as soon as its
	// failures reach that rate of a full window (rounded up), full or not:
	// a crawl that starts on a failing site trips after as few failures as
	// one that had a window of successes.
	FailureThreshold float64
	// ConsecutiveFailures, above 0, also trips after that many failures in
	// a row.
	ConsecutiveFailures int
	// Cooldown is how long an open circuit refuses before it lets probes
	// through (above 0).
	Cooldown time.Duration
	// HalfOpenProbes is how many probes may be in flight at once and must
	// pass to close the circuit; one failed probe re-opens it.
	HalfOpenProbes int

	// SlowCall and SlowCallRate are resilience4j's slow-call rule: once a
	// window of outcomes is in, a share of successes slower than SlowCall
	// at or above SlowCallRate trips the circuit. Set both or neither.
	SlowCall     time.Duration
	SlowCallRate float64
	// SlopeMultiple warns (and with SlopeTrip, trips) when the median of
	// the latest successes rises past SlopeMultiple × the domain's
	// baseline median and at least SlopeFloor above it. Requests sent with
	// more in flight than when the baseline was taken are not judged, the
	// time the crawler's process was stopped is left out of a latency, and
	// a slowdown most other domains share trips nothing: the crawler's own
	// burst or delay is not the site slowing down.
	SlopeMultiple float64
	SlopeFloor    time.Duration
	SlopeTrip     bool
	// MaxCooldown grows the cooldown of a key that trips again before a
	// healthy stretch: Cooldown × trips in a row, capped here, with full
	// jitter so that domains never reopen in lock-step.
	MaxCooldown time.Duration
	// TimeoutMultiple cuts, once TimeoutAfter successes are in, a request
	// slower than TimeoutMultiple × the p95 of recent successes (at least
	// TimeoutFloor), counting it degraded.
	TimeoutMultiple float64
	TimeoutFloor    time.Duration
	TimeoutAfter    int
}

// Settings is the part of p a circuit decides with.
func (p Profile) Settings() Settings {
	return Settings{WindowSize: p.WindowSize, FailureThreshold: p.FailureThreshold,
		ConsecutiveFailures: p.ConsecutiveFailures, Cooldown: p.Cooldown, HalfOpenProbes: p.HalfOpenProbes}
}

// ErrInvalidProfile is wrapped by every error Validate returns.
var ErrInvalidProfile = errors.New("breaker: invalid profile")

// ProfileError says which field of which profile (or of a bare Settings,
// Profile empty) is out of range, and why.
type ProfileError struct {
	Profile string
	Field   string
	Value   any
	Reason  string
}

func (e *ProfileError) Error() string {
	if e.Profile == "" {
		return fmt.Sprintf("breaker: %s = %v: %s", e.Field, e.Value, e.Reason)
	}
	return fmt.Sprintf("breaker: profile %s: %s = %v: %s", e.Profile, e.Field, e.Value, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidProfile) true.
func (e *ProfileError) Unwrap() error { return ErrInvalidProfile }

// Validate reports the first field of p that is out of range: the error
// names the profile, the field, its value and why, and wraps
// ErrInvalidProfile.
func (p Profile) Validate() error {
	bad := func(field string, v any, reason string) error {
		return &ProfileError{Profile: p.Name, Field: field, Value: v, Reason: reason}
	}
	var pe *ProfileError
	if err := p.Settings().Validate(); errors.As(err, &pe) {
		pe.Profile = p.Name
		return pe
	}
	switch {
	case p.SlowCall < 0:
		return bad("SlowCall", p.SlowCall, "must be 0 (off) or a duration")
	case math.IsNaN(p.SlowCallRate) || p.SlowCallRate < 0 || p.SlowCallRate > 1:
		return bad("SlowCallRate", p.SlowCallRate, "must be 0 (off) or in (0, 1]")
	case (p.SlowCall > 0) != (p.SlowCallRate > 0):
		return bad("SlowCallRate", p.SlowCallRate, fmt.Sprintf("set both SlowCall and SlowCallRate, or neither (SlowCall = %v)", p.SlowCall))
	case math.IsNaN(p.SlopeMultiple) || p.SlopeMultiple < 0 || (p.SlopeMultiple > 0 && p.SlopeMultiple <= 1):
		return bad("SlopeMultiple", p.SlopeMultiple, "must be 0 (off) or above 1: how many times the baseline latency is a slope")
	case p.SlopeFloor < 0:
		return bad("SlopeFloor", p.SlopeFloor, "must be 0 or more")
	case p.SlopeTrip && p.SlopeMultiple == 0:
		return bad("SlopeTrip", p.SlopeTrip, "needs SlopeMultiple above 1")
	case p.MaxCooldown != 0 && p.MaxCooldown < p.Cooldown:
		return bad("MaxCooldown", p.MaxCooldown, fmt.Sprintf("must be 0 (no growth) or at least Cooldown (%v)", p.Cooldown))
	case math.IsNaN(p.TimeoutMultiple) || p.TimeoutMultiple < 0 || (p.TimeoutMultiple > 0 && p.TimeoutMultiple < 1):
		return bad("TimeoutMultiple", p.TimeoutMultiple, "must be 0 (off) or at least 1")
	case p.TimeoutFloor < 0:
		return bad("TimeoutFloor", p.TimeoutFloor, "must be 0 or more")
	case p.TimeoutAfter < 0 || (p.TimeoutMultiple > 0 && p.TimeoutAfter < 1):
		return bad("TimeoutAfter", p.TimeoutAfter, "must be at least 1 success when TimeoutMultiple is set")
	}
	return nil
}
