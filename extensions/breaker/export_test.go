package breaker

// Dormant is how many domains are compacted now (see WithIdleTTL).
func (b *Breaker) Dormant() int { return b.dormantTotals().domains }

// Options and helpers the external tests reach; unexported in the package.
var (
	WithAlarmAfter       = withAlarmAfter
	WithThrottleRetries  = withThrottleRetries
	WithRand             = withRand
	WithUnfinishedSample = withUnfinishedSample
	ParseRetryAfter      = parseRetryAfter
)

// TimeoutError is the error of a request cut by its adaptive timeout.
type TimeoutError = timeoutError
