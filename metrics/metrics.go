package metrics

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/internal/observed"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Namespace prefixes every metric name.
const Namespace = "breakwater"

// DefaultBuckets are the request-duration histogram's upper bounds, in
// seconds: crawl latencies run from a cached 10 ms page to a minute-long
// hang cut by the client's timeout.
var DefaultBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// DefaultReadTimeout bounds how long one scrape waits for a queue's depth.
const DefaultReadTimeout = 2 * time.Second

// ErrAlreadyWatched is returned by Observe for a second breaker, and by
// WatchQueue and WatchCheckpoint for a name already watched: two sources
// would export the same series.
var ErrAlreadyWatched = errors.New("metrics: already watched")

// statsSource is what a scrape reads: the observed *breaker.Breaker.
type statsSource interface {
	Stats() []breaker.DomainStats
}

// overviewSource is a statsSource that can sum its domains without
// listing them all (*breaker.Breaker is one): a scrape then reads only the
// domains that get series of their own.
type overviewSource interface {
	Overview(k int) breaker.Overview
}

// DefaultDomainSeries is how many domains get series of their own unless
// Config.DomainSeries says otherwise: about 23 series each from the scrape,
// and up to 14 (the latency histogram) and a few transitions from the
// hooks, so that a crawl over a million domains stays under 10,000
// series.
const DefaultDomainSeries = 150

// OtherDomains is the domain label of the hooks' series that count the
// domains past Config.DomainSeries's limit.
const OtherDomains = "_other"

// labelSet hands out a domain's own label to the first limit domains, and
// OtherDomains to the rest.
type labelSet struct {
	limit int
	n     atomic.Int64
	m     sync.Map // domain → struct{}
}

func (l *labelSet) label(domain string) string {
	if l.limit < 0 {
		return domain
	}
	if _, ok := l.m.Load(domain); ok {
		return domain
	}
	if l.n.Add(1) > int64(l.limit) {
		l.n.Add(-1)
		return OtherDomains
	}
	if _, loaded := l.m.LoadOrStore(domain, struct{}{}); loaded {
		l.n.Add(-1)
	}
	return domain
}

// Metrics exports a crawl's breaker, queue and checkpoint to Prometheus.
// Make one with New and give it the breaker with breakwater.Use (or
// Observe). It is safe for concurrent use.
//
// All names start with breakwater_. Per domain (label domain, the host
// with its port, as the breaker keys it; "(hook)" marks the series
// Observe feeds, the rest are read from the breaker at each scrape):
//
//	breaker_state{state}                  gauge: 1 for the current state (closed, open, half-open), 0 for the others
//	breaker_info{profile}                 gauge: 1; the profile the domain uses
//	breaker_trips_total                   counter: times the circuit opened
//	breaker_retry_at_seconds              gauge: while open, when it may be probed (Unix seconds)
//	breaker_transitions_total{from,to,reason}  counter (hook)
//	degrading_total                       counter: latency-slope warnings (hook)
//	outcomes_total{class}                 counter: success, degraded, invalid, throttled, blocked, gone, client_error, excluded
//	refused_total                         counter: refused by an open circuit, never sent
//	request_duration_seconds              histogram (hook): gate to outcome, every attempt that left; buckets 10 ms to 60 s
//	success_ratio                         gauge: successes among the latest outcomes
//	median_latency_seconds                gauge: median latency of the latest successes
//	pace_limit                            gauge: in-flight cap now (0: none of Breakwater's own)
//	pace_gap_seconds                      gauge: least gap between request starts now
//	pace_in_flight                        gauge: requests between gate and outcome
//	pace_halted                           gauge: 1 while a Retry-After halts the domain
//	pace_pauses_total                     counter: Retry-After pauses
//	pace_paused_seconds_total             counter: time spent halted
//	adaptive_timeout_seconds              gauge: the adaptive timeout in force (0: none yet)
//
// Per queue (label queue) and per checkpoint (label checkpoint):
//
//	queue_jobs{state}                     gauge: ready, delayed, in-flight
//	queue_dead_letters                    gauge: jobs given up on
//	queue_up                              gauge: 1 if the depth could be read at this scrape
//	checkpoint_urls{state}                gauge: pending, in-flight, done, failed, parked, dead
//	checkpoint_up                         gauge: 1 if the counts could be read
//
// Over every domain, whatever Config.DomainSeries says:
//
//	domains{state}                        gauge: domains by circuit state (compacted idle ones are closed)
//	domains_compacted                     gauge: idle domains compacted by the breaker
//	domains_unhealthy                     gauge: domains not closed and healthy
//	all_outcomes_total{class}             counter: attempts by class over every domain
//	all_refused_total                     counter: refusals over every domain
//	all_trips_total                       counter: trips over every domain
//
// No label takes a URL, a path or an error text. A useful alert:
// breakwater_breaker_state{state="open"} == 1 for long, or
// rate(breakwater_outcomes_total{class="blocked"}[5m]) above zero (fix the
// client, not the target).
type Metrics struct {
	observed    observed.Set // the breakers Observe was given
	log         zerolog.Logger
	readTimeout time.Duration
	buckets     []float64

	transitions *prometheus.CounterVec
	degrading   *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	observers   sync.Map // domain → prometheus.Observer, so the hot path hashes no labels
	other       prometheus.Observer

	// perDomain is how many domains get series of their own (< 0: all).
	perDomain                                        int
	latencyLabels, transitionLabels, degradingLabels labelSet

	mu          sync.Mutex
	source      statsSource
	queues      []namedQueue
	checkpoints []namedCheckpoint
}

// Config configures Metrics; a zero field keeps the default.
type Config struct {
	// Buckets replaces DefaultBuckets: upper bounds in seconds, strictly
	// increasing.
	Buckets []float64

	// DomainSeries is how many domains get series of their own (label
	// domain); zero means DefaultDomainSeries, a negative value every
	// domain.
	//
	// At each scrape the k domains chosen are those not closed and
	// healthy (open, half-open, paused, failing, throttled: worst first)
	// and, while there is room, the busiest healthy ones; a crawl over k
	// domains or fewer has every domain's series. The hooks' series
	// (request duration, transitions, degrading) label the first k
	// domains each of them sees and count the rest under
	// domain="_other". The all_* and domains series count every domain
	// whatever k is (see Metrics). At 1,000,000 domains a scrape with the
	// default returns about 5,600 series in 25 ms (BenchmarkGatherBroad).
	DomainSeries int

	// Logger logs a queue or checkpoint that could not be read during a
	// scrape (one warning per failed read). Without it Metrics is silent;
	// the failure still shows as breakwater_queue_up 0.
	Logger zerolog.Logger

	// ReadTimeout bounds how long one scrape waits for each queue's depth
	// (default DefaultReadTimeout). Keep it below Prometheus's scrape
	// timeout.
	ReadTimeout time.Duration
}

// apply sets c's non-zero fields over m.
func (c Config) apply(m *Metrics) error {
	if c.Buckets != nil {
		b := c.Buckets
		ok := len(b) > 0 && b[0] > 0
		for i := 1; ok && i < len(b); i++ {
			ok = b[i] > b[i-1]
		}
		if !ok {
			return fmt.Errorf("metrics: Config.Buckets %v: want upper bounds in seconds, above 0 and strictly increasing", b)
		}
		m.buckets = slices.Clone(b)
	}
	if c.DomainSeries != 0 {
		m.perDomain = c.DomainSeries
	}
	if !collyx.IsZero(c.Logger) {
		m.log = c.Logger
	}
	if c.ReadTimeout != 0 {
		if c.ReadTimeout < 0 {
			return fmt.Errorf("metrics: Config.ReadTimeout %v: must be above 0", c.ReadTimeout)
		}
		m.readTimeout = c.ReadTimeout
	}
	return nil
}

// New makes the metrics and registers them with reg (a
// *prometheus.Registry, usually; serve it with Handler or Serve). It fails
// if reg already holds Breakwater's metrics: use one Metrics per registry,
// or give each Metrics the registry wrapped by prometheus.WrapRegistererWith
// with a label whose value tells the crawls apart ({crawl="shop"}). A
// later Config's non-zero fields win.
func New(reg prometheus.Registerer, cfg ...Config) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("metrics: New(nil): pass the prometheus.Registerer to register with, e.g. prometheus.NewRegistry()")
	}
	m := &Metrics{log: zerolog.Nop(), readTimeout: DefaultReadTimeout, buckets: DefaultBuckets, perDomain: DefaultDomainSeries}
	for _, c := range cfg {
		if err := c.apply(m); err != nil {
			return nil, err
		}
	}
	m.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "breaker_transitions_total",
		Help: "Circuit state changes, by domain, from and to state, and reason (failure_rate, slow_calls, latency_slope, cooldown_elapsed, ...).",
	}, []string{"domain", "from", "to", "reason"})
	m.degrading = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "degrading_total",
		Help: "Latency-slope warnings: the domain's median success latency climbed past its profile's multiple of the baseline.",
	}, []string{"domain"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "request_duration_seconds",
		Help:    "Time from the breaker's gate to the attempt's outcome, for every attempt that left (refused requests never leave).",
		Buckets: m.buckets,
	}, []string{"domain"})
	for _, l := range []*labelSet{&m.latencyLabels, &m.transitionLabels, &m.degradingLabels} {
		l.limit = m.perDomain
	}
	cs := []prometheus.Collector{m.transitions, m.degrading, m.latency, &collector{m: m}}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("metrics: register with the registry (is Breakwater's set already registered there? use one Metrics per registry): %w", err)
		}
	}
	return m, nil
}

// Observe follows the breaker s (observe.Observer: breakwater.Use calls
// it before the crawl). Events only hooks can tell come through hooks:
// transitions, latency-slope warnings and the latency of every attempt,
// each a few atomic operations that neither block nor allocate once a
// domain has been seen. What the breaker already counts (per-domain
// state, outcomes, refusals, pace and timeout) is read from it at each
// scrape, never counted a second time. A second call with the same
// breaker does nothing; another breaker returns ErrAlreadyWatched (give
// each breaker its own Metrics and registry).
//
// With a shared breaker store (storage/redis) the state and the trips are
// the crawl's, seen by every worker; outcomes, refusals, latency and pace
// are this process's. Give each worker's metrics an instance label, as
// Prometheus does by target.
func (m *Metrics) Observe(s observe.Subject) error {
	if s == nil {
		return errors.New("metrics: Observe(nil): pass the *breaker.Breaker")
	}
	if src, ok := s.(statsSource); ok {
		m.mu.Lock()
		other := m.source != nil && m.source != src
		if !other {
			m.source = src
		}
		m.mu.Unlock()
		if other {
			return fmt.Errorf("%w: a breaker is followed already; give each breaker its own Metrics and registry", ErrAlreadyWatched)
		}
	}
	if !m.observed.Add(s) {
		return nil // already following s
	}
	return s.Hook(observe.Hooks{OnTransition: m.transition, OnAttempt: m.outcome, OnDegrading: m.degradingEvent})
}

func (m *Metrics) transition(t circuit.Transition) {
	m.transitions.WithLabelValues(m.transitionLabels.label(t.Key), t.From.String(), t.To.String(), t.Reason).Inc()
}

func (m *Metrics) degradingEvent(domain string, _, _ time.Duration) {
	m.degrading.WithLabelValues(m.degradingLabels.label(domain)).Inc()
}

func (m *Metrics) outcome(a observe.Attempt) {
	m.observer(a.Domain).Observe(a.Result.Latency.Seconds())
}

func (m *Metrics) observer(domain string) prometheus.Observer {
	if o, ok := m.observers.Load(domain); ok {
		return o.(prometheus.Observer)
	}
	if m.latencyLabels.label(domain) == OtherDomains {
		return m.otherObserver()
	}
	o, _ := m.observers.LoadOrStore(domain, m.latency.WithLabelValues(domain))
	return o.(prometheus.Observer)
}

// otherObserver is the latency series of the domains past the limit.
func (m *Metrics) otherObserver() prometheus.Observer {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.other == nil {
		m.other = m.latency.WithLabelValues(OtherDomains)
	}
	return m.other
}
