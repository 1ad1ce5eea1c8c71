// Package circuit is what a circuit kept outside package breaker (the
// shared one of storage/redis) needs to behave exactly as the in-process
// one: the trip count, the figures a Transition carries, and the optional
// interfaces the breaker looks for. breakertest runs one table against
// both circuits, so a difference between these and the breaker's own
// shows up there.
package circuit

import (
	"math"
	"slices"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// FailuresToTrip is how many failures in the window of p trip it, full or
// not: the failure threshold as a count, so the comparison is exact (0.35
// of 50 is 18 failures, since 17/50 = 0.34 is below the threshold). It is
// also the most requests a site can receive after it starts failing.
func FailuresToTrip(p breaker.Profile) int {
	n := int(math.Ceil(p.FailureThreshold*float64(p.WindowSize) - 1e-9))
	return max(n, 1)
}

// FailureRate is the share of failures among the outcomes in outs whose
// Class is Counted, 0 when none is: what a Transition's FailureRate
// reports.
func FailureRate(outs []breaker.Result) float64 {
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

// MedianSuccessLatency is the median latency over the successes in outs
// only (timeouts would otherwise make the median the timeout repeated):
// what a Transition's MedianLatency reports.
func MedianSuccessLatency(outs []breaker.Result) time.Duration {
	lats := make([]time.Duration, 0, len(outs))
	for _, o := range outs {
		if o.Class == breaker.Success {
			lats = append(lats, o.Latency)
		}
	}
	if len(lats) == 0 {
		return 0
	}
	slices.Sort(lats)
	return lats[len(lats)/2]
}

// Restorer is implemented by circuits that can be put back into a saved
// state, so a restart is not a way around a cooldown. The breaker looks
// for the method by its signature (Breaker.Restore).
type Restorer interface {
	// RestoreOpen opens the circuit until retryAt, counting trips trips so
	// far. A retryAt in the past leaves the circuit closed.
	RestoreOpen(clk clock.Clock, retryAt time.Time, trips int) (breaker.Transition, error)
}

// Holder is implemented by circuits that can be held open until a given
// time by a decision taken outside the window: a latency slope, slow calls,
// a fleet-wide pause, a grown cooldown, Breaker.HoldOpen. A closed or
// half-open circuit opens (a new generation, its window cleared); an open
// one stays open at least until then (never shorter). The breaker looks
// for the method by its signature.
type Holder interface {
	HoldOpen(clk clock.Clock, until time.Time, reason string) (breaker.Transition, error)
}
