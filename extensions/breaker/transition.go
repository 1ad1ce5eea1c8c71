package breaker

import (
	"time"

	"github.com/rs/zerolog"
)

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
	ReasonThrottleHorizon     = "throttled_too_long"   // → open: nothing but throttles for Pacing.ThrottleHorizon
)

// Transition is one change of a domain's circuit state, with the evidence
// that caused it. The zero Transition (From == To) is no change at all: what
// a Circuit returns when nothing moved.
type Transition struct {
	Domain string
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
	// Trips is how many times the domain's circuit has opened so far.
	Trips int
}

// transitionLog is a Transition as the breaker logs it.
type transitionLog Transition

// MarshalZerologObject writes t as one structured log event's fields.
func (t transitionLog) MarshalZerologObject(e *zerolog.Event) {
	e.Str("domain", t.Domain).
		Stringer("from", t.From).
		Stringer("to", t.To).
		Str("reason", t.Reason).
		Float64("failure_rate", round3(t.FailureRate)).
		Float64("median_latency_ms", ms(t.MedianLatency)).
		Int("window_n", len(t.Window)).
		Int("trips", t.Trips)
	if t.To == Open {
		e.Time("retry_at", t.RetryAt)
	}
	arr := zerolog.Arr()
	for _, o := range t.Window {
		arr.Dict(zerolog.Dict().Str("class", o.Class.String()).Float64("ms", ms(o.Latency)))
	}
	e.Array("window", arr)
}

func ms(d time.Duration) float64 { return round3(float64(d) / float64(time.Millisecond)) }

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
