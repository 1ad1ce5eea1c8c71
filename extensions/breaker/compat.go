package breaker

import (
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// The circuit's types and constants, as package circuit defines them.
type (
	State            = circuit.State
	Class            = circuit.Class
	Result           = circuit.Result
	Transition       = circuit.Transition
	CircuitOpenError = circuit.OpenError
	Circuit          = circuit.Circuit
	Store            = circuit.Store
	MemoryStore      = circuit.MemoryStore
)

const (
	Closed   = circuit.Closed
	Open     = circuit.Open
	HalfOpen = circuit.HalfOpen

	Success     = circuit.Success
	Degraded    = circuit.Degraded
	Invalid     = circuit.Invalid
	Throttled   = circuit.Throttled
	Blocked     = circuit.Blocked
	Gone        = circuit.Gone
	ClientError = circuit.ClientError
	Excluded    = circuit.Excluded

	ReasonFailureRate         = circuit.ReasonFailureRate
	ReasonConsecutiveFailures = circuit.ReasonConsecutiveFailures
	ReasonCooldownElapsed     = circuit.ReasonCooldownElapsed
	ReasonProbeFailed         = circuit.ReasonProbeFailed
	ReasonProbesPassed        = circuit.ReasonProbesPassed
	ReasonRestored            = circuit.ReasonRestored
	ReasonSlowCalls           = circuit.ReasonSlowCalls
	ReasonLatencySlope        = circuit.ReasonLatencySlope
	ReasonFleetPause          = circuit.ReasonFleetPause
	ReasonThrottleHorizon     = circuit.ReasonThrottleHorizon
)

// numClasses is how many classes there are.
const numClasses = int(circuit.Excluded) + 1

// failed says whether r is a failure (a window's test).
func failed(r Result) bool { return r.Class.Failure() }

// failuresToTrip is how many failures in p's window trip it.
func failuresToTrip(p Profile) int { return p.Settings().FailuresToTrip() }

// failureRate is the share of failures among the counted results in outs.
func failureRate(outs []Result) float64 { return circuit.FailureRate(outs) }

// medianSuccessLatency is the median latency over the successes in outs.
func medianSuccessLatency(outs []Result) time.Duration { return circuit.MedianLatency(outs) }

// countsAsTrip says whether opening for reason is the site's failure.
func countsAsTrip(reason string) bool { return circuit.CountsAsTrip(reason) }
