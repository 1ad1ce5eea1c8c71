package domains

import (
	"time"

	"github.com/rs/zerolog"
)

// LogPace logs a change of a domain's pace.
func LogPace(l zerolog.Logger, domain, why string, limit int, gap time.Duration) {
	l.Info().Str("event", "pace_changed").Str("domain", domain).Str("why", why).
		Int("limit", limit).Float64("gap_ms", ms(gap)).
		Msgf("breaker: pace for %s now %d in flight, %v between requests (%s)", domain, limit, gap, why)
}
