package breaker

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/internal/domains"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// Validator judges whether a fetched response is usable data;
// extensions/validate implements it.
type Validator interface {
	// Check reports whether a fetched response is usable data. It is called
	// once per response, after every OnHTML callback ran (from the
	// breaker's OnScraped), and for 2xx responses Colly v2.3.0 routes to
	// OnError. nil means valid; otherwise the page is class Invalid, counts
	// against the domain's breaker, and the error's text is the reason.
	Check(r *colly.Response) error
}

// Config is everything about a Breaker besides its default profile. New
// takes any number: a zero field keeps the default, or what an earlier
// Config set; a later one's non-zero fields win, and hooks add up.
type Config struct {
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
	// Domains gives the hosts matching a pattern their own profile: a
	// pattern is an exact host ("shop.example.com", "127.0.0.1:8080") or a
	// suffix starting with a dot (".example.com" matches every subdomain
	// and example.com itself). The most specific match wins: an exact
	// host, then the longest suffix. Each Config adds its domains to those
	// given before.
	Domains map[string]Profile
	// Pacing is each domain's ceiling pace (see Pacing). Without it a
	// domain has no in-flight limit or gap of Breakwater's own until a 429
	// slows it down.
	Pacing Pacing
	// Fleet configures the fleet-wide judgement (see FleetGuard).
	Fleet FleetGuard
	// IdleTTL is how long a domain must be left alone (no request, nothing
	// in flight) before its state is compacted into about 40 bytes: default
	// DefaultIdleTTL; negative keeps every domain whole. Only a domain with
	// nothing to remember is compacted (closed with no failure in its
	// window, not paused, throttled or blocked, no slow call or slope under
	// way, not of a shared store, no Ticket out), and it decides as if kept
	// whole; it forgets latencies. The breaker sweeps by itself, at most
	// every quarter of the TTL; Sweep sweeps at once. A compacted domain is
	// not active to the fleet guard: lower Fleet.Active with the TTL.
	IdleTTL time.Duration
	// BaseTransport is the transport the breaker's own wraps, instead of
	// the one the collector has when Register runs. It is rarely needed:
	// Register wraps the collector's transport, whatever it is.
	BaseTransport http.RoundTripper
	// ResendHorizon bounds how long the breaker holds a throttled URL to
	// send it again itself. A 429 (or a 503 with Retry-After) within the
	// throttle-retry budget is normally sent again once the domain's pause
	// and pace allow, its request held in flight meanwhile; when that is
	// more than ResendHorizon away, the URL is handed back instead: its
	// Attempt has ResendAt set, it is listed unfinished until then, and an
	// OnAttempt hook that keeps URLs (a shared queue's, the checkpoint's)
	// requeues it for then. A shared queue that ends a worker's run when
	// only far-off work is left (storage/redis's Config.WaitHorizon) sets
	// it through Observe. Zero or less (the default) holds every re-send.
	ResendHorizon time.Duration
	// BlockedAfter is how many 401 or 403 answers in a row (no success
	// between them) hold a domain for the rest of the run: its requests
	// are refused without being sent, listed unfinished as blocked, and
	// the run ends in error ("blocked: fix the client"), since no
	// rescheduled run of the same client helps. A 403 never counts as the
	// site degrading, so without the hold a blocked site receives every
	// URL queued for it (each retry too). Default 10; negative never holds.
	BlockedAfter int

	// The hooks, as observe.Hooks documents them. Each is called in the
	// goroutine that caused the event and must not block; a nil one is not
	// called. Each Config adds its hooks to those given before: every hook
	// given is called, in the order given.
	OnTransition func(circuit.Transition)
	OnRefused    func(r *colly.Request, err *circuit.OpenError)
	OnAttempt    func(observe.Attempt)
	OnNotVisited func(r *colly.Request, err error)
	OnDegrading  func(domain string, median, baseline time.Duration)

	// set applies a setting of the package's own (the tests' knobs).
	set func(*Breaker) error
}

// apply sets what c gives: its non-zero fields, its domains and hooks
// added to those given before.
func (c Config) apply(b *Breaker) error {
	if c.set != nil {
		if err := c.set(b); err != nil {
			return err
		}
	}
	if c.Store != nil {
		b.cfg.Store = c.Store
	}
	if c.Clock != nil {
		b.clock = clock.OrSystem(c.Clock)
	}
	if !collyx.IsZero(c.Logger) {
		b.log = c.Logger
	}
	if c.Validator != nil {
		b.validator = c.Validator
	}
	patterns := make([]string, 0, len(c.Domains))
	for pattern := range c.Domains {
		patterns = append(patterns, pattern)
	}
	sort.Strings(patterns)
	for _, pattern := range patterns {
		b.cfg.Domains = append(b.cfg.Domains, domains.Override{Pattern: pattern, Profile: c.Domains[pattern]})
	}
	if c.Pacing != (Pacing{}) {
		if c.Pacing.Parallelism < 0 || c.Pacing.MinGap < 0 {
			return fmt.Errorf("breaker: Config.Pacing %+v: Parallelism and MinGap must be 0 (none) or more", c.Pacing)
		}
		b.cfg.Pacing = c.Pacing
	}
	if c.Fleet != (FleetGuard{}) {
		b.cfg.Fleet = c.Fleet
	}
	if c.IdleTTL != 0 {
		b.cfg.IdleTTL = c.IdleTTL
	}
	if c.BaseTransport != nil {
		b.baseTransport = c.BaseTransport
	}
	if c.BlockedAfter != 0 {
		b.cfg.BlockedAfter = c.BlockedAfter
	}
	if c.ResendHorizon != 0 {
		b.cfg.ResendHorizon = c.ResendHorizon
	}
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

// SetValidator makes every 2xx go through v, as Config.Validator does:
// what breakwater.Use calls with the validator it is given, before the
// crawl.
func (b *Breaker) SetValidator(v Validator) {
	if v != nil {
		b.validator = v
	}
}

// Hook adds an observer's hooks to b (observe.Subject): what an
// observe.Observer's Observe calls, before the crawl.
func (b *Breaker) Hook(h observe.Hooks) error {
	b.set.Hook(h.OnTransition, h.OnDegrading, h.ResendHorizon)
	return Config{OnNotVisited: h.OnNotVisited, OnRefused: h.OnRefused, OnAttempt: h.OnAttempt}.apply(b)
}

// withAlarmAfter sets how many throttled (429) or blocked (403) answers in
// a row from one domain raise a warning event (default 10). They never trip
// the breaker: they mean "fix your client", not "the target is down".
func withAlarmAfter(n int) Config {
	return Config{set: func(b *Breaker) error {
		if n < 1 {
			return fmt.Errorf("breaker: withAlarmAfter(%d): must be at least 1", n)
		}
		b.cfg.AlarmAfter = n
		return nil
	}}
}

// withThrottleRetries sets how many times one URL answered 429 is sent
// again after the pause (default 10). A throttled attempt does not spend
// any other retry budget; past this many the URL is reported with
// GaveUp set, never dropped silently.
func withThrottleRetries(n int) Config {
	return Config{set: func(b *Breaker) error {
		if n < 0 {
			return fmt.Errorf("breaker: withThrottleRetries(%d): must be 0 or more", n)
		}
		b.throttleRetries = n
		return nil
	}}
}

// withRand sets the source of the jitter drawn for grown cooldowns: a
// function returning a number in [0, 1). Default math/rand/v2's Float64.
func withRand(f func() float64) Config {
	return Config{set: func(b *Breaker) error {
		if f == nil {
			return fmt.Errorf("breaker: withRand(nil): pass a function, or leave the option out")
		}
		b.cfg.Rand = f
		return nil
	}}
}
