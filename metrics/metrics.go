package metrics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/storage"
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

// DefaultDomainSeries is how many domains get series of their own unless
// Config.DomainSeries says otherwise: a broad crawl stays under 10,000
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

// Metrics exports a crawl's breaker, queues and checkpoints to Prometheus.
// Make one with New and give it the breaker with breakwater.Use (or
// Observe). Every name starts with breakwater_; per-domain series carry
// the label domain, and no label takes a URL, a path or an error text.
// docs/metrics.md lists every series. It is safe for concurrent use.
type Metrics struct {
	observed    observe.Subjects // the breakers Observe was given
	log         zerolog.Logger
	readTimeout time.Duration
	buckets     []float64

	transitions *prometheus.CounterVec
	degrading   *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	observers   sync.Map                   // domain → prometheus.Observer, so the hot path hashes no labels
	other       func() prometheus.Observer // the latency series of the domains past the limit, made on first use

	// perDomain is how many domains get series of their own (< 0: all).
	perDomain                                        int
	latencyLabels, transitionLabels, degradingLabels labelSet

	mu          sync.Mutex
	source      observe.Domains // the observed breaker's: what a scrape reads
	queues      []namedQueue
	checkpoints []namedCheckpoint
	proxies     func() []proxy.Snapshot
}

// Config configures Metrics; a zero field keeps the default.
type Config struct {
	// Buckets replaces DefaultBuckets: upper bounds in seconds, strictly
	// increasing.
	Buckets []float64

	// DomainSeries is how many domains get series of their own (zero:
	// DefaultDomainSeries; negative: every domain). A scrape picks the
	// unhealthy ones first, then the busiest; the hooks' series label the
	// first ones they see and count the rest as OtherDomains.
	DomainSeries int

	// Logger gets a warning for each queue or checkpoint read that failed.
	Logger zerolog.Logger

	// ReadTimeout replaces DefaultReadTimeout; keep it below Prometheus's
	// scrape timeout.
	ReadTimeout time.Duration
}

// apply sets c's non-zero fields over m's defaults.
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
	m.perDomain = cmp.Or(c.DomainSeries, m.perDomain)
	if !reflect.ValueOf(c.Logger).IsZero() { // given: a zerolog.Logger cannot be compared
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

// New makes the metrics and registers them with reg (serve it with Serve,
// or on a mux of your own with promhttp.HandlerFor and
// promhttp.ContinueOnError). It fails if reg already holds Breakwater's metrics: use one
// Metrics per registry, or wrap it with prometheus.WrapRegistererWith and
// a label that tells the crawls apart.
func New(reg prometheus.Registerer, c Config) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("metrics: New(nil): pass the prometheus.Registerer to register with, e.g. prometheus.NewRegistry()")
	}
	m := &Metrics{log: zerolog.Nop(), readTimeout: DefaultReadTimeout, buckets: DefaultBuckets, perDomain: DefaultDomainSeries}
	if err := c.apply(m); err != nil {
		return nil, err
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
	m.other = sync.OnceValue(func() prometheus.Observer { return m.latency.WithLabelValues(OtherDomains) })
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

// Observe follows the breaker s (breakwater.Use calls it); again with the
// same breaker it does nothing, with another it returns ErrAlreadyWatched.
// With a shared store, state and trips are the crawl's, the rest this
// process's.
func (m *Metrics) Observe(s observe.Subject) error {
	if s == nil {
		return errors.New("metrics: Observe(nil): pass the *breaker.Breaker")
	}
	if src, ok := s.(observe.Domains); ok {
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
	if a.Cached {
		return // Colly's cache answered: no request, no latency of the site's
	}
	m.observer(a.Domain).Observe(a.Result.Latency.Seconds())
}

func (m *Metrics) observer(domain string) prometheus.Observer {
	if o, ok := m.observers.Load(domain); ok {
		return o.(prometheus.Observer)
	}
	if m.latencyLabels.label(domain) == OtherDomains {
		return m.other()
	}
	o, _ := m.observers.LoadOrStore(domain, m.latency.WithLabelValues(domain))
	return o.(prometheus.Observer)
}

// QueueDepth is how many jobs a queue holds, by where they are.
type QueueDepth struct {
	Ready    int64 // claimable now
	Delayed  int64 // waiting for a backoff, a delayed start or a parked domain
	InFlight int64 // claimed by a worker, not yet acked
	Dead     int64 // dead letters: given up on
}

type (
	namedQueue      = named[func(ctx context.Context) (QueueDepth, error)]
	namedCheckpoint = named[func() (map[storage.State]int, error)]
)

// named is a watched source and the label value it is exported under.
type named[F any] struct {
	name string
	read F
}

// watch adds w to *list unless its name is there already.
func watch[F any](m *Metrics, list *[]named[F], kind string, w named[F]) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range *list {
		if x.name == w.name {
			return fmt.Errorf("%w: %s %q", ErrAlreadyWatched, kind, w.name)
		}
	}
	*list = append(*list, w)
	return nil
}

// WatchQueue makes every scrape call depth for a job queue's depth,
// exported under the label queue=name. depth is called with a deadline
// (see Config.ReadTimeout); a backend plugs in without this package
// importing it:
//
//	m.WatchQueue("redis", func(ctx context.Context) (metrics.QueueDepth, error) {
//		s, err := cs.Stats(ctx) // cs is a *redis.CollyStorage
//		return metrics.QueueDepth{Ready: s.Ready, Delayed: s.Delayed, InFlight: s.InFlight, Dead: s.Dead}, err
//	})
//
// A name already watched returns ErrAlreadyWatched.
func (m *Metrics) WatchQueue(name string, depth func(ctx context.Context) (QueueDepth, error)) error {
	if name == "" || depth == nil {
		return errors.New("metrics: WatchQueue needs a name for the queue label and a depth function")
	}
	return watch(m, &m.queues, "queue", namedQueue{name, depth})
}

// WatchCheckpoint makes every scrape call counts for a checkpoint's URLs
// by state, exported under the label checkpoint=name: the Counts method
// of a *checkpoint.Checkpoint or of any storage.Store (the embedded file,
// memory, Redis).
//
//	m.WatchCheckpoint("crawl.db", cp.Counts)
//
// A name already watched returns ErrAlreadyWatched.
func (m *Metrics) WatchCheckpoint(name string, counts func() (map[storage.State]int, error)) error {
	if name == "" || counts == nil {
		return errors.New("metrics: WatchCheckpoint needs a name for the checkpoint label and a counts function (a store's Counts)")
	}
	return watch(m, &m.checkpoints, "checkpoint", namedCheckpoint{name, counts})
}

// WatchProxies makes every scrape export each proxy of a crawl's pool
// (the Stats method of a *proxy.Pool): its state, requests, outcomes and
// ejections, under the label proxy=host:port, never its credentials.
//
//	m.WatchProxies(pool.Stats)
//
// A second pool returns ErrAlreadyWatched.
func (m *Metrics) WatchProxies(stats func() []proxy.Snapshot) error {
	if stats == nil {
		return errors.New("metrics: WatchProxies needs a stats function (a *proxy.Pool's Stats)")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proxies != nil {
		return fmt.Errorf("%w: a proxy pool is watched already", ErrAlreadyWatched)
	}
	m.proxies = stats
	return nil
}
