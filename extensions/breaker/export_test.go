package breaker

import (
	"net/http"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/deadline"
	"github.com/breakwater-crawl/breakwater/internal/pace"
)

// Dormant is how many domains are compacted now (see Config.IdleTTL).
func (b *Breaker) Dormant() int { return b.set.Dormant() }

// Wrap wraps base in the breaker's transport, as Register does the
// collector's.
func (b *Breaker) Wrap(base http.RoundTripper) http.RoundTripper { return b.wrap(base) }

// Options and helpers the external tests reach; unexported in the package.
var (
	WithAlarmAfter       = withAlarmAfter
	WithThrottleRetries  = withThrottleRetries
	WithRand             = withRand
	WithUnfinishedSample = withUnfinishedSample
	ParseRetryAfter      = pace.ParseRetryAfter
	RetriesOnError       = shouldRetry
)

// TimeoutError is the error of a request cut by its adaptive timeout.
type TimeoutError = deadline.TimeoutError

// Helpers the external tests reach; unexported in the package, or kept
// under internal/ for the rest of the module.
var (
	FailuresToTrip = func(p Profile) int { return p.Settings().FailuresToTrip() }
	IsDNSError     = isDNSError
	HostOf         = hostOf
)

// NewCircuit returns an in-process circuit for domain, closed.
func NewCircuit(domain string, p Profile) (circuit.Circuit, error) {
	return circuit.MemoryStore{}.Circuit(domain, p.Settings())
}
