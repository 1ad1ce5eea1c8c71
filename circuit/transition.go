package circuit

import "time"

// Why a circuit changed state.
const (
	ReasonFailureRate         = "failure_rate"         // closed → open: the window's failures reached the threshold's share of a full window
	ReasonConsecutiveFailures = "consecutive_failures" // closed → open: too many failures in a row
	ReasonCooldownElapsed     = "cooldown_elapsed"     // open → half-open
	ReasonProbeFailed         = "probe_failed"         // half-open → open
	ReasonProbesPassed        = "probes_passed"        // half-open → closed
	ReasonRestored            = "restored"             // state carried over from a checkpoint
	ReasonSlowCalls           = "slow_calls"           // closed → open: too many slow successes in a full window
	ReasonLatencySlope        = "latency_slope"        // closed → open: the median latency climbed past the baseline
	ReasonFleetPause          = "client_side_suspect"  // → open: most domains tripped at once; pausing all of them
	ReasonThrottleHorizon     = "throttled_too_long"   // → open: nothing but throttles for the caller's throttle horizon
)

// Transition is one change of a circuit's state, with the evidence
// that caused it. The zero Transition (From == To) is no change at all: what
// a Circuit returns when nothing moved.
type Transition struct {
	// Key is the circuit's key: a domain for package breaker.
	Key    string
	From   State
	To     State
	At     time.Time
	Reason string
	// Window holds the outcomes the circuit held when it changed, oldest
	// first (for a trip: the window that tripped it; for a failed probe: the
	// probe).
	Window []Result
	// FailureRate is the failure rate over Window.
	FailureRate float64
	// MedianLatency is the median latency of the successes in Window.
	MedianLatency time.Duration
	// RetryAt is when an opened circuit may be probed again (To == Open).
	RetryAt time.Time
	// Trips is how many times the circuit has opened so far.
	Trips int
}
