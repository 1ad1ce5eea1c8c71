package breaker

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/internal/domains"
	"github.com/breakwater-crawl/breakwater/internal/pace"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// Validator judges whether a fetched response is usable data;
// extensions/validate implements it.
type Validator interface {
	// Check is called once per 2xx response, after its OnHTML callbacks.
	// A non-nil error makes the page Invalid, a failure of its domain.
	Check(r *colly.Response) error
}

// Config configures New; its zero value is a breaker with the Standard
// profile, in memory, silent. A zero field keeps its default.
type Config struct {
	// Profile is every domain's profile unless Domains says otherwise.
	// Zero means Standard().
	Profile Profile
	// Store is where circuits live. Default MemoryStore; storage/redis
	// shares them between workers.
	Store circuit.Store
	// Clock is the time source (tests use clocktest.Fake). Default
	// clock.System.
	Clock clock.Clock
	// Logger makes the breaker log every transition and alarm as one
	// structured event. Without it the breaker is silent.
	Logger zerolog.Logger
	// Validator makes every 2xx go through it: a page it rejects is
	// Invalid and counts against the breaker. Register it on the collector
	// before the breaker.
	Validator Validator
	// Domains gives the hosts matching a pattern their own profile: an
	// exact host ("shop.example.com", "127.0.0.1:8080") or a suffix with a
	// leading dot (".example.com", which matches example.com too). An
	// exact host wins, then the longest suffix.
	Domains map[string]Profile
	// Pacing is each domain's ceiling pace (see Pacing). Without it a
	// domain has no in-flight limit or gap of Breakwater's own until a 429
	// slows it down.
	Pacing Pacing
	// Fleet configures the fleet-wide judgement (see FleetGuard).
	Fleet FleetGuard
	// IdleTTL is how long a domain with nothing to remember (closed, no
	// failure in its window, no pause, not of a shared store) must be left
	// alone before it is compacted into about 40 bytes; it then decides as
	// if kept whole but forgets latencies. Default DefaultIdleTTL; negative
	// keeps every domain whole.
	IdleTTL time.Duration
	// Proxies is the crawl's proxy pool: its ProxyFunc is the collector's
	// (SetProxyFunc, before Register), or a proxy function of the user's
	// own over the same proxies, which should ask the pool's Ejected
	// (Register has the pool told its choices). Each attempt is then
	// charged to its proxy as well as its site: a failure the proxy
	// explains counts against the proxy alone and the request goes again
	// through the next proxy; the ending names a client-side cause when
	// more proxies fail than the pool may eject.
	Proxies *proxy.Pool
	// BaseTransport, rarely needed, is wrapped instead of the collector's
	// transport at Register.
	BaseTransport http.RoundTripper
	// ResendHorizon bounds how long the breaker holds a throttled URL to
	// send it again itself; a re-send due later is handed back (its
	// Attempt's ResendAt set, listed unfinished) for a queue to requeue.
	// Zero or less (the default) holds every re-send.
	ResendHorizon time.Duration
	// BlockedAfter is how many 401 or 403 answers in a row hold a domain
	// for the rest of the run: its requests are refused, listed unfinished
	// as blocked, and the run ends in error ("blocked: fix the client").
	// Default 10; negative never holds.
	BlockedAfter int

	// The hooks, as observe.Hooks documents them: called in the goroutine
	// of the event, they must not block. Observers (Hook) add their own.
	OnTransition func(circuit.Transition)
	OnRefused    func(r *colly.Request, err *circuit.OpenError)
	OnAttempt    func(observe.Attempt)
	OnNotVisited func(r *colly.Request, err error)
	OnDegrading  func(domain string, median, baseline time.Duration)

	// set applies a setting of the package's own (the tests' knobs).
	set func(*Breaker) error
}

// apply sets what c gives but its Profile: its non-zero fields, its
// domains and hooks added to those set before (Hook adds an observer's).
func (c Config) apply(b *Breaker) error {
	if c.set != nil {
		if err := c.set(b); err != nil {
			return err
		}
	}
	b.cfg.Store, b.clock, b.validator = cmp.Or(c.Store, b.cfg.Store), cmp.Or(c.Clock, b.clock), cmp.Or(c.Validator, b.validator)
	if !collyx.IsZero(c.Logger) {
		b.log = c.Logger
	}
	for _, pattern := range slices.Sorted(maps.Keys(c.Domains)) {
		b.cfg.Domains = append(b.cfg.Domains, domains.Override{Pattern: pattern, Profile: c.Domains[pattern]})
	}
	if c.Pacing != (Pacing{}) {
		if c.Pacing.Parallelism < 0 || c.Pacing.MinGap < 0 {
			return fmt.Errorf("breaker: Config.Pacing %+v: Parallelism and MinGap must be 0 (none) or more", c.Pacing)
		}
		g := c.Pacing
		b.cfg.Pacing = pace.Config{Parallelism: g.Parallelism, MinGap: g.MinGap, Backoff: g.Backoff, Recover: g.Recover,
			Step: g.Step, MaxGap: g.MaxGap, ThrottleHorizon: g.ThrottleHorizon}
	}
	b.cfg.Fleet, b.cfg.IdleTTL, b.baseTransport = cmp.Or(domains.FleetConfig(c.Fleet), b.cfg.Fleet), cmp.Or(c.IdleTTL, b.cfg.IdleTTL), cmp.Or(c.BaseTransport, b.baseTransport)
	if c.Proxies != nil {
		b.proxies, b.proxyCount = c.Proxies, len(c.Proxies.Stats())
	}
	b.cfg.BlockedAfter, b.cfg.ResendHorizon = cmp.Or(c.BlockedAfter, b.cfg.BlockedAfter), cmp.Or(c.ResendHorizon, b.cfg.ResendHorizon)
	if c.OnTransition != nil {
		b.cfg.OnTransition = append(b.cfg.OnTransition, c.OnTransition)
	}
	if c.OnNotVisited != nil {
		b.onNotVisited = append(b.onNotVisited, c.OnNotVisited)
	}
	if c.OnRefused != nil {
		b.onRefused = append(b.onRefused, c.OnRefused)
	}
	if c.OnAttempt != nil {
		b.onOutcome = append(b.onOutcome, c.OnAttempt)
	}
	if c.OnDegrading != nil {
		b.cfg.OnDegrading = append(b.cfg.OnDegrading, c.OnDegrading)
	}
	return nil
}

// Hook adds an observer's hooks to b (observe.Subject): what an
// observe.Observer's Observe calls, before the crawl.
func (b *Breaker) Hook(h observe.Hooks) error {
	b.set.Hook(h.OnTransition, h.OnDegrading, h.ResendHorizon)
	return Config{OnNotVisited: h.OnNotVisited, OnRefused: h.OnRefused, OnAttempt: h.OnAttempt}.apply(b)
}
