package circuit

import (
	"math"
	"slices"
	"time"
)

// Settings are what a circuit decides with: the Profile fields of the
// same names, which document them.
type Settings struct {
	WindowSize          int
	FailureThreshold    float64
	ConsecutiveFailures int
	Cooldown            time.Duration
	HalfOpenProbes      int
}

// Validate reports the first field out of range as a *ProfileError
// with no profile name.
func (s Settings) Validate() error {
	bad := func(field string, v any, reason string) error {
		return &ProfileError{Field: field, Value: v, Reason: reason}
	}
	switch {
	case s.WindowSize < 1:
		return bad("WindowSize", s.WindowSize, "must be at least 1 outcome")
	case math.IsNaN(s.FailureThreshold) || s.FailureThreshold <= 0 || s.FailureThreshold > 1:
		return bad("FailureThreshold", s.FailureThreshold, "must be in (0, 1]: a failure rate, 0.5 trips at half the window failing")
	case s.ConsecutiveFailures < 0:
		return bad("ConsecutiveFailures", s.ConsecutiveFailures, "must be 0 (off) or more")
	case s.Cooldown <= 0:
		return bad("Cooldown", s.Cooldown, "must be above 0: how long an open circuit waits before probing")
	case s.HalfOpenProbes < 1:
		return bad("HalfOpenProbes", s.HalfOpenProbes, "must be at least 1 probe")
	}
	return nil
}

// FailuresToTrip is how many failures in the window trip it, full or
// not: the threshold as a count, so the comparison is exact (0.35 of 50 is
// 18 failures, since 17/50 = 0.34 is below the threshold). It is also the
// most requests a key can receive after it starts failing. It is never
// below 1.
func (s Settings) FailuresToTrip() int {
	n := int(math.Ceil(s.FailureThreshold*float64(s.WindowSize) - 1e-9))
	return max(n, 1)
}

// FailureRate is the share of failures among the counted results in outs,
// 0 when none is counted: what a Transition's FailureRate reports.
func FailureRate(outs []Result) float64 {
	n, f := 0, 0
	for _, o := range outs {
		if o.Class.Counted() {
			n++
			if o.Class.Failure() {
				f++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(f) / float64(n)
}

// MedianLatency is the median latency over the successes in outs only
// (timeouts would otherwise make the median the timeout repeated): what a
// Transition's MedianLatency reports.
func MedianLatency(outs []Result) time.Duration {
	lats := make([]time.Duration, 0, len(outs))
	for _, o := range outs {
		if o.Class == Success {
			lats = append(lats, o.Latency)
		}
	}
	if len(lats) == 0 {
		return 0
	}
	slices.Sort(lats)
	return lats[len(lats)/2]
}

// CountsAsTrip says whether opening for reason is the key's own failure:
// a restored state, a fleet-wide pause or sustained throttling is not a
// new trip.
func CountsAsTrip(reason string) bool {
	return reason != ReasonRestored && reason != ReasonFleetPause && reason != ReasonThrottleHorizon
}
