package breaker

import (
	"github.com/breakwater-crawl/breakwater/internal/packmap"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/internal/domains"
	"github.com/breakwater-crawl/breakwater/internal/pace"
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
	proxyCount      int // how many proxies proxies has: a request is tried through each once at most
	onRefused       []func(*colly.Request, *circuit.OpenError)
	onNotVisited    []func(*colly.Request, error)
	onOutcome       []func(observe.Attempt)

	attempts   attemptTable   // *colly.Request → *attempt
	throttle   packmap.URLMap // URL → *atomic.Int32: 429 retries so far
	resend     packmap.URLMap // URL → *resendToken: throttled URLs the breaker will send again
	hopOf      packmap.URLMap // URL a bare redirect's hop ended at, not collected → *url.URL the chain started from
	gone       goneSet        // URLs whose latest answer was a 404 or 410
	warned     sync.Once      // the transport replaced after Register: logged once
	layoutWarn sync.Once      // Colly's OnError callbacks not found: logged once
	unfinished unfinishedList // a sample by URL, counts per domain past it
	cachedOK   atomic.Int64   // 2xx answers of Colly's cache, for Judge: no domain counted them
}

// New returns a Breaker whose domains use c.Profile (Standard when zero)
// unless c.Domains says otherwise. Every profile and setting is checked
// here, before any request is sent.
func New(c Config) (*Breaker, error) {
	p := c.Profile
	if p == (Profile{}) {
		p = Standard()
	}
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
	if err := c.apply(b); err != nil {
		return nil, err
	}
	b.cfg.Clock, b.cfg.Log = b.clock, b.log
	set, err := domains.New(b.cfg)
	if err != nil {
		return nil, err
	}
	b.set = set
	return b, nil
}

// hostOf returns the domain key for a URL host: lower-cased, port kept
// (the key Colly's LimitRules match on). The checkpoint, the report and
// storage/redis key domains the same way.
func hostOf(host string) string { return strings.ToLower(host) }

// Ticket is the right to send one request to a domain, from Allow back to
// Record.
type Ticket struct{ t domains.Ticket }

// Allow asks whether a request to host may be sent now: a refusal matches
// ErrOpen; other errors are the Store's.
func (b *Breaker) Allow(host string) (Ticket, error) {
	t, err := b.set.Allow(host)
	return Ticket{t}, err
}

// Record gives a ticket back with what the attempt returned. Give each
// ticket back once.
func (b *Breaker) Record(t Ticket, o circuit.Result) { b.set.Record(t.t, o) }

// State returns the state of host's circuit (Closed for a host never seen).
func (b *Breaker) State(host string) circuit.State { return b.set.State(host) }

// Stats returns a snapshot of every domain seen, sorted by domain,
// compacted ones included (see Config.IdleTTL).
func (b *Breaker) Stats() []observe.DomainStats { return b.set.Stats() }

// Overview returns the totals over every domain and the stats of the k
// worth a look (observe.Overview.Top); k ≤ 0 lists none. Unlike Stats it
// allocates nothing per domain: a metrics scrape of a broad crawl can
// afford it.
func (b *Breaker) Overview(k int) observe.Overview { return b.set.Overview(k) }

// Circuits returns the circuits of the named domains (every domain seen
// when none is named), sorted by domain, for a checkpoint to save. A
// domain never seen, or whose store cannot be read, is left out.
func (b *Breaker) Circuits(domains ...string) []observe.DomainCircuit {
	return b.set.Snapshots(domains...)
}

// Restore puts back a domain's circuit and pause as a checkpoint saved
// them, so a restart is no way around a cooldown or a Retry-After; a
// cooldown that ended meanwhile leaves the circuit on probation
// (docs/checkpoints.md). Nothing is counted and no hook is called.
func (b *Breaker) Restore(c observe.DomainCircuit) error { return b.set.Restore(c) }

// Compact compacts now every domain idle for Config.IdleTTL with nothing
// to remember. The breaker does so by itself as it goes; Compact is for a
// program that wants the memory back at once, and for measurements.
func (b *Breaker) Compact() { b.set.Sweep() }

// SetValidator makes the 2xx answers go through v, as Config.Validator
// does, for a breaker already built; breakwater.Use calls it. Call it
// before the crawl starts.
func (b *Breaker) SetValidator(v Validator) { b.validator = v }

// DefaultIdleTTL is Config.IdleTTL's default, the fleet guard's Active.
const DefaultIdleTTL = domains.DefaultIdleTTL

// FleetGuard judges all domains together (Config.Fleet): when many trip at
// once on network failures while none succeeds, the client is suspected,
// every active domain paused and the run ends in error. Zero fields take
// the defaults; docs/pacing.md tells each field.
type FleetGuard struct {
	// Share of the active domains tripping on network failures, Within
	// a window, with at least MinDomains of them, suspects the client.
	Share      float64
	Within     time.Duration
	MinDomains int
	// Pause is how long every active domain is paused then.
	Pause time.Duration
	// Active is how recently a domain must have been used to count.
	Active time.Duration
	// AlarmShare and AlarmMin: the share and least number of domains
	// whose failures raise the fleet alarm.
	AlarmShare float64
	AlarmMin   int
	// Off turns the guard off.
	Off bool
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

// Conservative suits a small, fragile origin with few URLs: a window of
// 10 tripping at 60 % failures, a 300 s cooldown growing to 30 min, one
// probe; a latency slope is warned of, never tripped on, and there is no
// slow-call rule or adaptive timeout. Each built-in profile is a fresh
// copy: a caller that changes a field changes only its own.
func Conservative() Profile { return domains.Conservative() }

// Standard suits a typical product crawl: a window of 20 tripping at 50 %
// failures, a 60 s cooldown growing to 10 min, two probes; slow calls (over
// 5 s) trip at 80 % of the window, a latency slope is warned of, and
// requests are cut at 4 × the domain's p95 (at least 1 s).
func Standard() Profile { return domains.Standard() }

// Aggressive suits high-volume crawls over many domains, cheap to re-run:
// a window of 50 tripping at 35 % failures, a 30 s cooldown growing to
// 5 min, three probes; a latency slope trips before errors appear.
func Aggressive() Profile { return domains.Aggressive() }

// Pacing is the user's ceiling for each domain's pace (Config.Pacing): the
// most requests in flight (Parallelism) and the least gap between two
// (MinGap). A throttle halts the domain and slows it: the gap holds just
// under the rate the site grants, learnt from its throttles (Backoff
// bounds each cut, up to MaxGap); clean successes speed it back (Recover,
// and Step while nothing is learnt); throttles only for ThrottleHorizon
// hold it open. Zero fields take the defaults;
// docs/pacing.md tells each field.
type Pacing struct {
	Parallelism     int
	MinGap          time.Duration
	Backoff         float64
	Recover         int
	Step            time.Duration
	MaxGap          time.Duration
	ThrottleHorizon time.Duration
}

// Defaults for the Pacing fields whose zero value stands for a default.
const (
	DefaultMaxGap          = pace.DefaultMaxGap
	DefaultThrottleHorizon = pace.DefaultThrottleHorizon
)
