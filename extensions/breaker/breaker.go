package breaker

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/internal/domains"
	"github.com/breakwater-crawl/breakwater/internal/fleet"
	"github.com/breakwater-crawl/breakwater/internal/hostkey"
	"github.com/breakwater-crawl/breakwater/internal/pace"
	"github.com/breakwater-crawl/breakwater/internal/urlset"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// Breaker keeps one circuit per domain (the URL's host, lower-cased, port
// included), created on first use, and wires them into a Colly collector
// with Register. It is safe for concurrent use.
type Breaker struct {
	set             *domains.Set
	cfg             domains.Config // until New makes the set
	clock           clock.Clock
	log             zerolog.Logger
	validator       Validator
	throttleRetries int
	baseTransport   http.RoundTripper
	proxies         *proxy.Pool
	onRefused       []func(*colly.Request, *circuit.OpenError)
	onNotVisited    []func(*colly.Request, error)
	onOutcome       []func(observe.Attempt)

	attempts   attemptTable   // *colly.Request → *attempt
	throttle   urlset.Map     // URL → *atomic.Int32: 429 retries so far
	resend     urlset.Map     // URL → *resendToken: throttled URLs the breaker will send again
	hopOf      urlset.Map     // URL a bare redirect's hop ended at, not collected → *url.URL the chain started from
	gone       goneSet        // URLs whose latest answer was a 404 or 410
	warned     sync.Once      // the transport replaced after Register: logged once
	layoutWarn sync.Once      // Colly's OnError callbacks not found: logged once
	unfinished unfinishedList // a sample by URL, counts per domain past it
	cachedOK   atomic.Int64   // 2xx answers of Colly's cache, for Judge: no domain counted them
}

// New returns a Breaker whose domains use profile p unless
// Config.Domains says otherwise. Every profile and setting is checked
// here, before any request is sent.
func New(p Profile, cfg ...Config) (*Breaker, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	b := &Breaker{
		cfg:             domains.Config{Profile: p, AlarmAfter: 10, BlockedAfter: 10},
		clock:           clock.System,
		log:             zerolog.Nop(),
		throttleRetries: 10,
		unfinished:      unfinishedList{limit: DefaultUnfinishedSample},
	}
	for _, c := range cfg {
		if err := c.apply(b); err != nil {
			return nil, err
		}
	}
	b.cfg.Clock, b.cfg.Log = b.clock, b.log
	set, err := domains.New(b.cfg)
	if err != nil {
		return nil, err
	}
	b.set = set
	return b, nil
}

// hostOf returns the domain key for a URL host (hostkey.Of).
func hostOf(host string) string { return hostkey.Of(host) }

// Ticket is the right to send one request to a domain, from Allow back to
// Record.
type Ticket = domains.Ticket

// DomainStats is one domain's state and counters.
// Fields: go doc github.com/breakwater-crawl/breakwater/internal/domains.DomainStats
type DomainStats = domains.DomainStats

// Allow asks whether a request to host may be sent now: a refusal matches
// ErrOpen; other errors are the Store's.
func (b *Breaker) Allow(host string) (Ticket, error) { return b.set.Allow(host) }

// Record gives a ticket back with what the attempt returned. Give each
// ticket back once.
func (b *Breaker) Record(t Ticket, o circuit.Result) { b.set.Record(t, o) }

// State returns the state of host's circuit (Closed for a host never seen).
func (b *Breaker) State(host string) circuit.State { return b.set.State(host) }

// Stats returns a snapshot of every domain seen, sorted by domain,
// compacted ones included (see Config.IdleTTL).
func (b *Breaker) Stats() []DomainStats { return b.set.Stats() }

// DefaultIdleTTL is Config.IdleTTL's default, the fleet guard's Active.
const DefaultIdleTTL = domains.DefaultIdleTTL

// FleetGuard judges all domains together (Config.Fleet): when many trip at
// once on network failures while none succeeds, the client is suspected,
// every active domain paused and the run ends in error. Zero fields take
// the defaults; docs/pacing.md tells each field.
type FleetGuard = fleet.Config

// The module's own packages reach b's set of domains (the checkpoint
// saves and restores its circuits, the metrics read its overview) and
// hand it a validator (breakwater.Use) through internal/domains.
func init() {
	domains.Of = func(x any) *domains.Set {
		if b, ok := x.(*Breaker); ok && b != nil {
			return b.set
		}
		return nil
	}
	domains.Validate = func(x, v any) {
		b, _ := x.(*Breaker)
		if v, ok := v.(Validator); ok && b != nil {
			b.validator = v
		}
	}
}

// HoldOpen opens host's circuit until until for a reason found outside
// its window (named in the transition, e.g. "robots_unavailable"), then
// probes it as after a cooldown. An open circuit is never shortened. It
// fails if the store's circuits cannot be held open from outside.
func (b *Breaker) HoldOpen(host string, until time.Time, reason string) error {
	return b.set.HoldOpen(host, until, reason)
}

// SetMinGap raises host's least gap between two requests to gap (a
// robots.txt Crawl-delay), per worker; a smaller gap changes nothing.
func (b *Breaker) SetMinGap(host string, gap time.Duration) error { return b.set.SetMinGap(host, gap) }

// ErrOpen is the sentinel every refusal matches: errors.Is(err, ErrOpen)
// is true for a *CircuitOpenError.
var ErrOpen = circuit.ErrOpen

// Profile configures a domain's circuit and early warnings; start from
// Conservative(), Standard() or Aggressive(). circuit.Profile documents
// every field.
type Profile = circuit.Profile

// ErrInvalidProfile is wrapped by every error Profile.Validate returns, a
// *circuit.ProfileError.
var ErrInvalidProfile = circuit.ErrInvalidProfile

// Conservative suits a small, fragile origin with few URLs
// (circuit.Conservative).
func Conservative() Profile { return circuit.Conservative() }

// Standard suits a typical product crawl (circuit.Standard).
func Standard() Profile { return circuit.Standard() }

// Aggressive suits high-volume crawls over many domains that are cheap to
// re-run (circuit.Aggressive).
func Aggressive() Profile { return circuit.Aggressive() }

// Pacing is the user's ceiling for each domain's pace (Config.Pacing): the
// most requests in flight (Parallelism) and the least gap between two
// (MinGap). A throttle halts the domain and slows it: the gap holds just
// under the rate the site grants, learnt from its throttles (Backoff
// bounds each cut, up to MaxGap); clean successes speed it back (Recover,
// and Step while nothing is learnt); throttles only for ThrottleHorizon
// hold it open. Zero fields take the defaults;
// docs/pacing.md tells each field.
type Pacing = pace.Config

// Defaults for the Pacing fields whose zero value stands for a default.
const (
	DefaultMaxGap          = pace.DefaultMaxGap
	DefaultThrottleHorizon = pace.DefaultThrottleHorizon
)
