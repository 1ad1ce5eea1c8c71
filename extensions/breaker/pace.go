package breaker

import (
	"time"

	"github.com/rs/zerolog"
)

// Pacing is the user's ceiling for each domain's pace: the most requests in
// flight to one domain and the least time between two requests to it. The
// pace starts there; a 429 (or a 503 with Retry-After) halts the domain
// until Retry-After and multiplies the pace down (fewer in flight, a longer
// gap); a run of clean successes raises it step by step, never past these
// settings: additive increase, multiplicative decrease.
//
// Parallelism ≤ 0 means no limit of Breakwater's own (Colly's LimitRules
// still apply); MinGap ≤ 0 means no gap. A request the breaker first sees
// at the transport — a redirect's hop, a request of a Clone() it was not
// registered on — is not held to Parallelism (its wait would run on the
// client's Timeout, already started): the circuit's room, below, still
// bounds it. Register a clone (Register) to pace its requests too. Give the per-domain parallelism
// here rather than to one Colly LimitRule matching every host: that rule's
// slots are shared by all of them, so one slow or waiting domain holds up
// the rest.
//
// Backoff is the factor a throttle multiplies the gap by (default 2) and
// divides the in-flight limit by, once per throttle episode: answers to
// requests that left before the last slowdown do not slow the domain again.
// Recover is how many clean successes in a row earn one step back (default
// 10); Step is how much each step takes off the gap (default a tenth of the
// gap reached by the last throttle, at least 1 ms).
//
// MaxGap caps the gap a throttle can grow to (default 60 s, Scrapy
// AutoThrottle's MAX_DELAY). ThrottleHorizon ends sustained throttling: a
// domain that answered nothing but throttles for that long (default 5
// minutes) is held open like a tripped circuit, so its remaining URLs are
// refused and listed unfinished and the run ends tripped instead of waiting
// forever.
//
// Without Config.Pacing every field takes its default: no in-flight limit or
// gap of the user's, the throttle behaviour above. Whatever the pacing, a
// domain never has more requests in flight than its circuit could still
// stop: the failures that trip its profile's window, less the failures
// already in it.
type Pacing struct {
	Parallelism     int
	MinGap          time.Duration
	Backoff         float64
	Recover         int
	Step            time.Duration
	MaxGap          time.Duration
	ThrottleHorizon time.Duration
}

// Defaults for the Pacing fields whose zero value stands for a default.
const (
	DefaultMaxGap          = time.Minute
	DefaultThrottleHorizon = 5 * time.Minute
)

// PaceStats is a domain's pace at one moment.
type PaceStats struct {
	Limit     int           `json:"limit"`         // in-flight cap, 0 = none of Breakwater's
	Gap       time.Duration `json:"gap_ns"`        // least time between request starts
	InFlight  int           `json:"in_flight"`     // requests between the gate and their outcome
	Pauses    int           `json:"pauses"`        // Retry-After halts taken
	PausedFor time.Duration `json:"paused_for_ns"` // time spent halted, in total
	HaltUntil time.Time     `json:"halt_until,omitzero"`
}

func logPace(l zerolog.Logger, domain, why string, limit int, gap time.Duration) {
	l.Info().Str("event", "pace_changed").Str("domain", domain).Str("why", why).
		Int("limit", limit).Float64("gap_ms", ms(gap)).
		Msgf("breaker: pace for %s now %d in flight, %v between requests (%s)", domain, limit, gap, why)
}
