package metrics

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
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

// ErrAlreadyWatched is returned by Watch for a second breaker, and by
// WatchQueue and WatchCheckpoint for a name already watched: two sources
// would export the same series.
var ErrAlreadyWatched = errors.New("metrics: already watched")

// StatsSource is what Watch reads on every scrape: *breaker.Breaker.
type StatsSource interface {
	Stats() []breaker.DomainStats
}

// OverviewSource is a StatsSource that can sum its domains without
// listing them all (*breaker.Breaker is one): a scrape then reads only the
// domains that get series of their own.
type OverviewSource interface {
	Overview(k int) breaker.Overview
}

// DefaultDomainSeries is how many domains get series of their own unless
// WithDomainSeries says otherwise: about 23 series each from the scrape,
// and up to 14 (the latency histogram) and a few transitions from the
// hooks, so that a crawl over a million domains stays under 10,000
// series.
const DefaultDomainSeries = 150

// WithDomainSeries sets how many domains get series of their own (label
// domain); default DefaultDomainSeries, a negative k every domain.
//
// At each scrape the k domains chosen are those not closed and healthy
// (open, half-open, paused, failing, throttled: worst first) and, while
// there is room, the busiest healthy ones; a crawl over k domains or
// fewer has every domain's series. The hooks' series (request duration,
// transitions, degrading) label the first k domains each of them sees and
// count the rest under domain="_other". The all_* and domains series
// count every domain whatever k is.
func WithDomainSeries(k int) Option {
	return func(m *Metrics) error {
		if k == 0 {
			k = DefaultDomainSeries
		}
		m.perDomain = k
		return nil
	}
}

// OtherDomains is the domain label of the hooks' series that count the
// domains past WithDomainSeries's limit.
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
// Make one with New, give it the breaker with breakwater.Use (or
// Observe), and Watch the breaker. It is safe for concurrent use.
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
	source      StatsSource
	queues      []namedQueue
	checkpoints []namedCheckpoint
}

// Option configures Metrics.
type Option func(*Metrics) error

// WithBuckets replaces DefaultBuckets: upper bounds in seconds, strictly
// increasing.
func WithBuckets(b []float64) Option {
	return func(m *Metrics) error {
		ok := len(b) > 0 && b[0] > 0
		for i := 1; ok && i < len(b); i++ {
			ok = b[i] > b[i-1]
		}
		if !ok {
			return fmt.Errorf("metrics: WithBuckets(%v): want upper bounds in seconds, above 0 and strictly increasing", b)
		}
		m.buckets = slices.Clone(b)
		return nil
	}
}

// WithLogger logs a queue or checkpoint that could not be read during a
// scrape (one warning per failed read). Without it Metrics is silent; the
// failure still shows as breakwater_queue_up 0.
func WithLogger(l zerolog.Logger) Option {
	return func(m *Metrics) error {
		m.log = l
		return nil
	}
}

// WithReadTimeout bounds how long one scrape waits for each queue's depth
// (default DefaultReadTimeout). Keep it below Prometheus's scrape timeout.
func WithReadTimeout(d time.Duration) Option {
	return func(m *Metrics) error {
		if d <= 0 {
			return fmt.Errorf("metrics: WithReadTimeout(%v): must be above 0", d)
		}
		m.readTimeout = d
		return nil
	}
}

// New makes the metrics and registers them with reg (a
// *prometheus.Registry, usually; serve it with Handler or Serve). It fails
// if reg already holds Breakwater's metrics: use one Metrics per registry,
// or give each Metrics the registry wrapped by prometheus.WrapRegistererWith
// with a label whose value tells the crawls apart ({crawl="shop"}).
func New(reg prometheus.Registerer, opts ...Option) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("metrics: New(nil): pass the prometheus.Registerer to register with, e.g. prometheus.NewRegistry()")
	}
	m := &Metrics{log: zerolog.Nop(), readTimeout: DefaultReadTimeout, buckets: DefaultBuckets, perDomain: DefaultDomainSeries}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(m); err != nil {
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

// Observe returns the hooks that feed the metrics only events can tell:
// transitions, latency-slope warnings and the latency of every attempt
// (observe.Observer: breakwater.Use calls it before the crawl). Each
// hook is a few atomic operations; none blocks or allocates once a
// domain has been seen. A second call with the same breaker does nothing.
func (m *Metrics) Observe(s observe.Subject) error {
	if !m.observed.Add(s) {
		return nil // already following s
	}
	return s.Hook(observe.Hooks{OnTransition: m.transition, OnAttempt: m.outcome, OnDegrading: m.degradingEvent})
}

func (m *Metrics) transition(t breaker.Transition) {
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

// Watch makes every scrape read s.Stats() (a *breaker.Breaker) for the
// per-domain state, outcomes, refusals, pace and timeout. One breaker per
// Metrics: a second one returns ErrAlreadyWatched.
func (m *Metrics) Watch(s StatsSource) error {
	if s == nil {
		return errors.New("metrics: Watch(nil): pass the *breaker.Breaker")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.source != nil && m.source != s {
		return fmt.Errorf("%w: a breaker is watched already; give each breaker its own Metrics and registry label", ErrAlreadyWatched)
	}
	m.source = s
	return nil
}
