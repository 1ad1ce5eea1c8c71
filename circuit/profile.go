package circuit

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Profile configures the circuit of a domain (or any key), and the early
// warnings a caller keeps beside it.
//
// WindowSize is how many of the latest counted outcomes (successes and
// failures) the circuit remembers. It must be at least 1.
//
// FailureThreshold is the failure rate, in (0, 1], at or above which a full
// window trips the circuit. The circuit trips as soon as its failures reach
// that rate of a full window (the rate times WindowSize, rounded up),
// before the window is full:
// whatever filled the rest, the rate would be at or above the threshold.
// So a crawl that starts on (or resumes into) a failing site, or whose
// pages are mostly 404s that are not counted, trips after as few failures
// as one that had a full window of successes, and never on fewer.
//
// ConsecutiveFailures, if above 0, also trips the circuit after that many
// failures in a row, full window or not ("three strikes"). 0
// turns the rule off.
//
// Cooldown is how long an open circuit refuses requests before it lets
// probes through. It must be above 0.
//
// HalfOpenProbes is how many probe requests a half-open circuit lets be in
// flight at once, and how many must pass for it to close. It must be at
// least 1. One failed probe re-opens the circuit.
//
// The fields above are the circuit itself (Settings, and all a shared
// circuit in Redis keeps); the ones below let the breaker (package
// extensions/breaker) see degradation coming. Each is off at its zero
// value.
//
// SlowCall and SlowCallRate are resilience4j's slow-call rule: a success
// slower than SlowCall is a slow call, and once the domain's latest
// WindowSize counted outcomes are in, a share of slow calls at or above
// SlowCallRate trips the circuit (reason slow_calls). Set both or neither.
//
// SlopeMultiple watches the latency slope (bugs are flat,
// degradation is a slope). The breaker keeps a baseline of the domain's
// median success latency; when the median of the latest successes rises
// past SlopeMultiple × baseline, and at least SlopeFloor above it, it emits
// a degrading warning event, and with SlopeTrip it trips the circuit too
// (reason latency_slope), before errors appear. The baseline remembers the
// most requests in flight to the domain it was taken at; a request sent
// with more in flight than that is not counted on the slope, since its
// latency includes a queue of the client's own (its connections, its CPU)
// that the baseline never paid: a burst of the crawler's own does not
// read as the site degrading.
//
// MaxCooldown, if set, grows the cooldown of a domain that trips again
// before a healthy stretch (WindowSize successes in a row), like Envoy's
// ejection time: Cooldown × trips in a row, capped at MaxCooldown, drawn
// uniformly between Cooldown and that (full jitter) so that domains never
// reopen in lock-step. Each healthy stretch takes one trip off the count.
//
// TimeoutMultiple sets an adaptive request timeout: once the domain has
// TimeoutAfter successes, a request to it slower than TimeoutMultiple × the
// 95th percentile of its recent success latencies (never less than
// TimeoutFloor) is cut and counted as degraded, so a site whose pages took
// 50 ms does not hold a slot for the full client timeout when it starts
// hanging.
//
// There are no silent defaults: start from Conservative(), Standard() or
// Aggressive() and change what differs. Validate reports the first field that
// is out of range.
type Profile struct {
	Name                string
	WindowSize          int
	FailureThreshold    float64
	ConsecutiveFailures int
	Cooldown            time.Duration
	HalfOpenProbes      int

	SlowCall        time.Duration
	SlowCallRate    float64
	SlopeMultiple   float64
	SlopeFloor      time.Duration
	SlopeTrip       bool
	MaxCooldown     time.Duration
	TimeoutMultiple float64
	TimeoutFloor    time.Duration
	TimeoutAfter    int
}

// The built-in profiles: which one fits depends on how fragile the
// origin is and how cheap a re-run is. Each call returns a fresh copy, so
// a caller that changes a field changes only its own.

// Conservative suits a small, fragile origin with few URLs: tolerate a
// bad stretch, wait long before probing.
// It warns of a latency slope but never trips on latency alone, and
// has no slow-call rule or adaptive timeout.
func Conservative() Profile {
	return Profile{Name: "conservative", WindowSize: 10, FailureThreshold: 0.6, Cooldown: 300 * time.Second, HalfOpenProbes: 1,
		SlopeMultiple: 3, SlopeFloor: 200 * time.Millisecond, MaxCooldown: 30 * time.Minute}
}

// Standard suits a typical product crawl: slow calls (over 5 s) trip
// when they are 80 % of the window, a slope is warned about, requests
// are cut at 4 × the domain's p95 (at least 1 s).
func Standard() Profile {
	return Profile{Name: "standard", WindowSize: 20, FailureThreshold: 0.5, Cooldown: 60 * time.Second, HalfOpenProbes: 2,
		SlowCall: 5 * time.Second, SlowCallRate: 0.8, SlopeMultiple: 3, SlopeFloor: 200 * time.Millisecond,
		MaxCooldown: 10 * time.Minute, TimeoutMultiple: 4, TimeoutFloor: time.Second, TimeoutAfter: 20}
}

// Aggressive suits high-volume crawls over many domains that are cheap
// to re-run: a large window detects reliably, a short cooldown costs
// little, and a latency slope trips before errors appear.
func Aggressive() Profile {
	return Profile{Name: "aggressive", WindowSize: 50, FailureThreshold: 0.35, Cooldown: 30 * time.Second, HalfOpenProbes: 3,
		SlowCall: 3 * time.Second, SlowCallRate: 0.6, SlopeMultiple: 2.5, SlopeFloor: 100 * time.Millisecond, SlopeTrip: true,
		MaxCooldown: 5 * time.Minute, TimeoutMultiple: 3, TimeoutFloor: 500 * time.Millisecond, TimeoutAfter: 20}
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
