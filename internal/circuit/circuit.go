// Package circuit is what the in-process circuit of package breaker and a
// circuit kept elsewhere (the shared one of storage/redis) share, so both
// behave exactly alike: the trip count, the figures a Transition carries,
// and the optional interfaces the breaker looks for. It knows nothing of
// package breaker's types (breaker imports it): the figures read each
// outcome through a function, and the interfaces take the Transition type
// as a parameter. breakertest runs one table against both circuits, so a
// difference between them shows up there.
package circuit

import (
	"math"
	"slices"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
)

// FailuresToTrip is how many failures in a window of windowSize outcomes
// trip it, full or not, at failure rate threshold: the threshold as a
// count, so the comparison is exact (0.35 of 50 is 18 failures, since
// 17/50 = 0.34 is below the threshold). It is also the most requests a
// site can receive after it starts failing. It is never below 1.
func FailuresToTrip(threshold float64, windowSize int) int {
	n := int(math.Ceil(threshold*float64(windowSize) - 1e-9))
	return max(n, 1)
}

// FailureRate is the share of failures among the outcomes in outs that
// enter the window, 0 when none does: what a Transition's FailureRate
// reports. class says of one outcome whether it is counted in the window
// at all and whether it is a failure.
func FailureRate[T any](outs []T, class func(T) (counted, failure bool)) float64 {
	n, f := 0, 0
	for _, o := range outs {
		if counted, failure := class(o); counted {
			n++
			if failure {
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
// what a Transition's MedianLatency reports. success gives one outcome's
// latency and whether it is a success.
func MedianSuccessLatency[T any](outs []T, success func(T) (time.Duration, bool)) time.Duration {
	lats := make([]time.Duration, 0, len(outs))
	for _, o := range outs {
		if lat, ok := success(o); ok {
			lats = append(lats, lat)
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
// for the method by its signature (Breaker.Restore); T is its Transition.
type Restorer[T any] interface {
	// RestoreOpen opens the circuit until retryAt, counting trips trips so
	// far. A retryAt in the past leaves the circuit closed.
	RestoreOpen(clk clock.Clock, retryAt time.Time, trips int) (T, error)
}

// Holder is implemented by circuits that can be held open until a given
// time by a decision taken outside the window: a latency slope, slow calls,
// a fleet-wide pause, a grown cooldown, Breaker.HoldOpen. A closed or
// half-open circuit opens (a new generation, its window cleared); an open
// one stays open at least until then (never shorter). The breaker looks
// for the method by its signature; T is its Transition.
type Holder[T any] interface {
	HoldOpen(clk clock.Clock, until time.Time, reason string) (T, error)
}
