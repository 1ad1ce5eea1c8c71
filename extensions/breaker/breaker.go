package breaker

import (
	"net/http"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
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
	maxRetryAfter   time.Duration
	throttleRetries int
	baseTransport   http.RoundTripper
	onRefused       []func(*colly.Request, *circuit.OpenError)
	onNotVisited    []func(*colly.Request, error)
	onOutcome       []func(observe.Attempt)

	attempts   attemptTable   // *colly.Request → *attempt
	throttle   urlset.Map     // URL → *atomic.Int32: 429 retries so far
	resend     urlset.Map     // URL → *resendToken: throttled URLs the breaker will send again
	hopOf      urlset.Map     // URL a bare redirect's hop ended at, not collected → *url.URL the chain started from (bare.go)
	gone       goneSet        // URLs whose latest answer was a 404 or 410
	warned     sync.Once      // the transport replaced after Register: logged once
	layoutWarn sync.Once      // Colly's OnError callbacks not found: logged once
	unfinished unfinishedList // a sample by URL, counts per domain past it
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
		maxRetryAfter:   10 * time.Minute,
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

// Ticket is the right to send one request to a domain: Breaker.Allow
// hands it out, and Breaker.Record takes it back with the attempt's
// result. It is a small value: no allocation on the hot path.
type Ticket = domains.Ticket

// DomainStats is one domain's state and counters.
// Fields: go doc github.com/breakwater-crawl/breakwater/internal/domains.DomainStats
type DomainStats = domains.DomainStats

// Allow asks whether a request to host may be sent now. It returns a
// *CircuitOpenError (errors.Is(err, ErrOpen)) when the domain's circuit
// refuses, or an error from the Store.
func (b *Breaker) Allow(host string) (Ticket, error) { return b.set.Allow(host) }

// Record gives a ticket back with what the attempt returned. Give each
// ticket back once.
func (b *Breaker) Record(t Ticket, o circuit.Result) { b.set.Record(t, o) }

// State returns the state of host's circuit (Closed for a host never seen).
func (b *Breaker) State(host string) circuit.State { return b.set.State(host) }

// Stats returns a snapshot of every domain seen, sorted by domain,
// compacted ones included (see Config.IdleTTL).
func (b *Breaker) Stats() []DomainStats { return b.set.Stats() }

// DefaultIdleTTL is Config.IdleTTL's default: the fleet guard's Active
// span, so a compacted domain is never one the guard counts as active.
const DefaultIdleTTL = domains.DefaultIdleTTL

// FleetGuard judges all domains together (Config.Fleet): when many trip
// at once on network failures while none succeeds, the client is suspected,
// every active domain is paused and the run ends in error. Zero fields take
// the defaults; Off disables it. docs/pacing.md tells each field.
type FleetGuard = fleet.Config

// Overview is every domain at a glance: totals, and the stats of the few
// worth a look, without an allocation per domain (a metrics scrape of a
// broad crawl can afford it).
// Fields: go doc github.com/breakwater-crawl/breakwater/internal/domains.Overview
type Overview = domains.Overview

// DomainSnapshot is one domain's circuit and Retry-After pause at one
// moment: what Snapshots returns, a checkpoint saves and Restore puts back.
// Fields: go doc github.com/breakwater-crawl/breakwater/internal/domains.DomainSnapshot
type DomainSnapshot = domains.DomainSnapshot

// Overview returns the totals over every domain and the stats of the k
// worth a look (see Overview.Top); k ≤ 0 lists none.
func (b *Breaker) Overview(k int) Overview { return b.set.Overview(k) }

// Snapshots returns the circuits of hosts (all domains seen when none are
// named), sorted by domain, for a checkpoint to save. A host never seen, or
// whose store cannot be read, is left out.
func (b *Breaker) Snapshots(hosts ...string) []DomainSnapshot { return b.set.Snapshots(hosts...) }

// Restore puts back a domain's circuit and pause as a checkpoint saved
// them, so a restart is no way around a cooldown or a Retry-After: a pause
// still ahead holds; a circuit open until a time still ahead opens until
// then; one whose cooldown ended while the crawl was stopped is on
// probation (its first failure re-opens it); a closed one gets its window's
// failures back, one short of a trip at most. Nothing is counted in Stats
// and no hook is called: nothing was sent.
func (b *Breaker) Restore(s DomainSnapshot) error { return b.set.Restore(s) }

// HoldOpen opens host's circuit until until for a reason found outside
// its window (named in the transition, e.g. "robots_unavailable"), then
// probes it as after a cooldown. An open circuit is never shortened. It
// fails if the store's circuits cannot be held open from outside.
func (b *Breaker) HoldOpen(host string, until time.Time, reason string) error {
	return b.set.HoldOpen(host, until, reason)
}

// SetMinGap raises host's least gap between two requests to gap (a
// robots.txt Crawl-delay): the pace never goes below it from now on. A
// smaller gap changes nothing. Each worker of a shared crawl sets its own.
func (b *Breaker) SetMinGap(host string, gap time.Duration) error { return b.set.SetMinGap(host, gap) }

// Sweep compacts now every domain idle for Config.IdleTTL with nothing to
// remember. The breaker sweeps by itself; Sweep is for measurements.
func (b *Breaker) Sweep() { b.set.Sweep() }

// ErrOpen is the sentinel every refusal matches: errors.Is(err, ErrOpen)
// is true for a *CircuitOpenError.
var ErrOpen = circuit.ErrOpen

// Profile configures the circuit of a domain and the early warnings
// beside it (slow calls, the latency slope, a growing cooldown, the
// adaptive timeout). Start from Conservative(), Standard() or Aggressive()
// and change what differs; Validate reports the first field out of range.
// circuit.Profile documents every field.
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
// most requests in flight to one domain (Parallelism) and the least time
// between two requests to it (MinGap). A 429, or a 503 with Retry-After,
// halts the domain until then and multiplies its pace down (Backoff, once
// per throttle episode, the gap never past MaxGap); clean successes raise
// it step by step (Recover, Step), never past these settings; a domain
// answering nothing but throttles for ThrottleHorizon is held open. Zero
// fields take the defaults (Backoff 2, Recover 10, Step a tenth of the
// throttled gap, DefaultMaxGap, DefaultThrottleHorizon); docs/pacing.md
// tells each field.
type Pacing = pace.Config

// Defaults for the Pacing fields whose zero value stands for a default.
const (
	DefaultMaxGap          = pace.DefaultMaxGap
	DefaultThrottleHorizon = pace.DefaultThrottleHorizon
)

// PaceStats is a domain's pace at one moment: its in-flight cap (0: none
// of Breakwater's), its gap, the requests in flight, the Retry-After
// pauses taken, the time spent paused and the end of the pause in force.
type PaceStats = pace.Stats
