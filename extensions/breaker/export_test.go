package breaker

import (
	"fmt"
	"net/http"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/deadline"
	"github.com/breakwater-crawl/breakwater/internal/pace"
)

// Dormant is how many domains are compacted now (see Config.IdleTTL).
func (b *Breaker) Dormant() int { return b.set.Dormant() }

// Wrap wraps base in the breaker's transport, as Register does the
// collector's.
func (b *Breaker) Wrap(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return newTransport(b, base).outer
}

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

// knob returns c with set added to its settings of the package's own:
// the knobs below take the Config they add to, as New takes one.
func knob(c Config, set func(*Breaker) error) Config {
	prev := c.set
	c.set = func(b *Breaker) error {
		if prev != nil {
			if err := prev(b); err != nil {
				return err
			}
		}
		return set(b)
	}
	return c
}

// withAlarmAfter sets how many throttled (429) or blocked (403) answers in
// a row from one domain raise a warning event (default 10). They never trip
// the breaker: they mean "fix your client", not "the target is down".
func withAlarmAfter(c Config, n int) Config {
	return knob(c, func(b *Breaker) error {
		if n < 1 {
			return fmt.Errorf("breaker: withAlarmAfter(%d): must be at least 1", n)
		}
		b.cfg.AlarmAfter = n
		return nil
	})
}

// withThrottleRetries sets how many times one URL answered 429 is sent
// again after the pause (default 10). A throttled attempt does not spend
// any other retry budget; past this many the URL is reported with
// GaveUp set, never dropped silently.
func withThrottleRetries(c Config, n int) Config {
	return knob(c, func(b *Breaker) error {
		if n < 0 {
			return fmt.Errorf("breaker: withThrottleRetries(%d): must be 0 or more", n)
		}
		b.throttleRetries = n
		return nil
	})
}

// withRand sets the source of the jitter drawn for grown cooldowns: a
// function returning a number in [0, 1). Default math/rand/v2's Float64.
func withRand(c Config, f func() float64) Config {
	return knob(c, func(b *Breaker) error {
		if f == nil {
			return fmt.Errorf("breaker: withRand(nil): pass a function, or leave the option out")
		}
		b.cfg.Rand = f
		return nil
	})
}

// withUnfinishedSample bounds the breaker's unfinished list: it lists at
// most about n URLs (default DefaultUnfinishedSample) and, past that,
// only counts the URLs of each domain, so a broad crawl with a million
// refused URLs does not hold a million entries. A negative n lists every
// URL, as before.
//
// The full list is the checkpoint's job: with extensions/checkpoint every
// URL's state (failed, parked, pending) is in its store, whatever the
// breaker lists.
func withUnfinishedSample(c Config, n int) Config {
	return knob(c, func(b *Breaker) error {
		if n == 0 {
			n = DefaultUnfinishedSample
		}
		b.unfinished.limit = n
		return nil
	})
}
