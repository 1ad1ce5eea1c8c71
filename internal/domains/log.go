package domains

import (
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/rs/zerolog"
)

// transitionLog is a Transition as the breaker logs it.
type transitionLog circuit.Transition

// MarshalZerologObject writes t as one structured log event's fields.
func (t transitionLog) MarshalZerologObject(e *zerolog.Event) {
	e.Str("domain", t.Key).
		Stringer("from", t.From).
		Stringer("to", t.To).
		Str("reason", t.Reason).
		Float64("failure_rate", round3(t.FailureRate)).
		Float64("median_latency_ms", ms(t.MedianLatency)).
		Int("window_n", len(t.Window)).
		Int("trips", t.Trips)
	if t.To == circuit.Open {
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

// LogPace logs a change of a domain's pace.
func LogPace(l zerolog.Logger, domain, why string, limit int, gap time.Duration) {
	l.Info().Str("event", "pace_changed").Str("domain", domain).Str("why", why).
		Int("limit", limit).Float64("gap_ms", ms(gap)).
		Msgf("breaker: pace for %s now %d in flight, %v between requests (%s)", domain, limit, gap, why)
}
