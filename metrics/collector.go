package metrics

import (
	"context"
	"github.com/breakwater-crawl/breakwater/observe"
	"slices"
	"strings"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/prometheus/client_golang/prometheus"
)

// collector reads the watched breaker, queues and checkpoints on every
// scrape: values the breaker already counts are exported as they are, not
// counted a second time.
type collector struct{ m *Metrics }

// allDescs is every desc made, for Describe.
var allDescs []*prometheus.Desc

func desc(name, help string, labels ...string) *prometheus.Desc {
	d := prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
	allDescs = append(allDescs, d)
	return d
}

var (
	descState = desc("breaker_state",
		"1 for the state the domain's circuit is in (closed, open, half-open), 0 for the other two.", "domain", "state")
	descInfo = desc("breaker_info",
		"Always 1; the profile label names the breaker profile the domain uses.", "domain", "profile")
	descTrips = desc("breaker_trips_total",
		"Times the domain's circuit has opened (with a shared store: across every worker).", "domain")
	descRetryAt = desc("breaker_retry_at_seconds",
		"While the circuit is open: when it may be probed again, in Unix seconds.", "domain")
	descOutcomes = desc("outcomes_total",
		"Attempts by outcome class: success, degraded and invalid (failures), throttled, blocked, gone, client_error, excluded.", "domain", "class")
	descRefused = desc("refused_total",
		"Requests refused by an open circuit without touching the network.", "domain")
	descSuccessRatio = desc("success_ratio",
		"Share of successes among the domain's latest counted outcomes (the rolling tracker).", "domain")
	descMedian = desc("median_latency_seconds",
		"Median latency of the successes among the domain's latest outcomes.", "domain")
	descPaceLimit = desc("pace_limit",
		"Most requests in flight to the domain that its pace allows now; 0 means no limit of Breakwater's own.", "domain")
	descPaceGap = desc("pace_gap_seconds",
		"Least time between two request starts to the domain that its pace allows now.", "domain")
	descPaceInFlight = desc("pace_in_flight",
		"Requests to the domain between the gate and their outcome.", "domain")
	descPaceHalted = desc("pace_halted",
		"1 while the domain is halted by a Retry-After, else 0.", "domain")
	descPausesTotal = desc("pace_pauses_total",
		"Retry-After pauses the domain has imposed.", "domain")
	descPausedSeconds = desc("pace_paused_seconds_total",
		"Time the domain has been halted by Retry-After pauses.", "domain")
	descTimeout = desc("adaptive_timeout_seconds",
		"Adaptive request timeout in force for the domain; 0 while there is none.", "domain")

	descQueueJobs = desc("queue_jobs",
		"Jobs in the queue by where they are: ready, delayed, in-flight.", "queue", "state")
	descQueueDead = desc("queue_dead_letters",
		"Jobs in the queue's dead letters: given up on.", "queue")
	descQueueUp = desc("queue_up",
		"1 if the queue's depth could be read at this scrape, else 0.", "queue")
	descCheckpointURLs = desc("checkpoint_urls",
		"URLs in the checkpoint by state: pending, in-flight, done, failed, parked, dead.", "checkpoint", "state")
	descCheckpointUp = desc("checkpoint_up",
		"1 if the checkpoint could be read at this scrape, else 0.", "checkpoint")
	descProxyState = desc("proxy_state",
		"1 for the state the proxy's circuit is in (closed: in the rotation, open: ejected, half-open: probed), 0 for the other two.", "proxy", "state")
	descProxySent = desc("proxy_requests_total",
		"Requests the rotation gave the proxy.", "proxy")
	descProxyOutcomes = desc("proxy_outcomes_total",
		"Attempts through the proxy by what they said of it: carried, connect_failed, auth_failed, proxy_error, blocked, outlier, not_judged.", "proxy", "outcome")
	descProxyEjections = desc("proxy_ejections_total",
		"Times the proxy was ejected from the rotation.", "proxy")

	descDomains = desc("domains",
		"Domains the breaker knows, by circuit state (closed, open, half-open); compacted idle domains count as closed.", "state")
	descCompacted = desc("domains_compacted",
		"Idle domains with nothing to remember, compacted to a small record until they are used again.")
	descUnhealthy = desc("domains_unhealthy",
		"Domains not closed and healthy: open, half-open, failures in the window, paused, or slowed by throttling.")
	descAllOutcomes = desc("all_outcomes_total",
		"Attempts by outcome class over every domain, those without series of their own included.", "class")
	descAllRefused = desc("all_refused_total",
		"Requests refused by an open circuit, over every domain.")
	descAllTrips = desc("all_trips_total",
		"Times a circuit opened, over every domain.")

	states  = []circuit.State{circuit.Closed, circuit.Open, circuit.HalfOpen}
	classes = func() []string {
		var out []string
		for c := circuit.Success; c <= circuit.Excluded; c++ {
			out = append(out, c.String())
		}
		return out
	}()
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	src, queues, checkpoints, proxies := c.m.source, c.m.queues, c.m.checkpoints, c.m.proxies
	c.m.mu.Unlock()
	if proxies != nil {
		collectProxies(ch, proxies())
	}
	if src != nil {
		c.collectBreaker(ch, src)
	}
	for _, q := range queues {
		c.collectQueue(ch, q)
	}
	for _, cp := range checkpoints {
		c.collectCheckpoint(ch, cp)
	}
}

// collectBreaker exports the totals over every domain, and the series of
// the domains that get their own (Config.DomainSeries).
func (c *collector) collectBreaker(ch chan<- prometheus.Metric, src observe.Domains) {
	o := src.Overview(max(c.m.perDomain, 0))
	if c.m.perDomain < 0 {
		o.Top = src.Stats() // every domain has series of its own
	}
	for _, st := range states {
		gauge(ch, descDomains, float64(o.States[st]), st.String())
	}
	gauge(ch, descCompacted, float64(o.Compacted))
	gauge(ch, descUnhealthy, float64(o.Unhealthy))
	for _, class := range classes {
		counter(ch, descAllOutcomes, float64(o.Outcomes[class]), class)
	}
	counter(ch, descAllRefused, float64(o.Refused))
	counter(ch, descAllTrips, float64(o.Trips))
	for _, s := range o.Top {
		collectDomain(ch, s)
	}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func collectDomain(ch chan<- prometheus.Metric, s observe.DomainStats) {
	d := s.Domain
	for _, st := range states {
		gauge(ch, descState, bit(s.State == st), d, st.String())
	}
	gauge(ch, descInfo, 1, d, s.Profile)
	counter(ch, descTrips, float64(s.Trips), d)
	if s.State == circuit.Open && !s.RetryAt.IsZero() {
		gauge(ch, descRetryAt, float64(s.RetryAt.UnixNano())/1e9, d)
	}
	// Every class, zeros included, so a rate() over a class that has not
	// happened yet is 0, not absent; and any class the breaker adds later.
	for _, class := range classes {
		counter(ch, descOutcomes, float64(s.Outcomes[class]), d, class)
	}
	for class, n := range s.Outcomes {
		if !slices.Contains(classes, class) {
			counter(ch, descOutcomes, float64(n), d, class)
		}
	}
	counter(ch, descRefused, float64(s.Refused), d)
	gauge(ch, descSuccessRatio, s.SuccessRate, d)
	gauge(ch, descMedian, s.MedianLatency.Seconds(), d)
	gauge(ch, descPaceLimit, float64(s.Pace.Limit), d)
	gauge(ch, descPaceGap, s.Pace.Gap.Seconds(), d)
	gauge(ch, descPaceInFlight, float64(s.Pace.InFlight), d)
	gauge(ch, descPaceHalted, bit(!s.Pace.HaltUntil.IsZero()), d)
	counter(ch, descPausesTotal, float64(s.Pace.Pauses), d)
	counter(ch, descPausedSeconds, s.Pace.PausedFor.Seconds(), d)
	gauge(ch, descTimeout, s.Timeout.Seconds(), d)
}

// collectProxies exports each proxy of a pool, named by host:port
// without credentials.
func collectProxies(ch chan<- prometheus.Metric, snaps []proxy.Snapshot) {
	for _, p := range snaps {
		for _, st := range states {
			gauge(ch, descProxyState, bit(p.State == st), p.Name, st.String())
		}
		counter(ch, descProxySent, float64(p.Sent), p.Name)
		counter(ch, descProxyEjections, float64(p.Ejections), p.Name)
		for _, o := range proxyOutcomes {
			counter(ch, descProxyOutcomes, float64(p.Outcomes[o]), p.Name, o)
		}
	}
}

// proxyOutcomes are Snapshot.Outcomes' names, every one exported.
var proxyOutcomes = []string{"carried", "connect_failed", "auth_failed", "proxy_error", "blocked", "outlier", "not_judged"}

func (c *collector) collectQueue(ch chan<- prometheus.Metric, q namedQueue) {
	ctx, cancel := context.WithTimeout(context.Background(), c.m.readTimeout)
	defer cancel()
	depth, err := q.read(ctx)
	if err != nil {
		c.m.log.Warn().Str("event", "metrics_read_failed").Str("queue", q.name).Err(err).
			Msg("metrics: the queue's depth could not be read for this scrape")
		gauge(ch, descQueueUp, 0, q.name)
		return
	}
	gauge(ch, descQueueUp, 1, q.name)
	gauge(ch, descQueueJobs, float64(depth.Ready), q.name, "ready")
	gauge(ch, descQueueJobs, float64(depth.Delayed), q.name, "delayed")
	gauge(ch, descQueueJobs, float64(depth.InFlight), q.name, "in-flight")
	gauge(ch, descQueueDead, float64(depth.Dead), q.name)
}

func (c *collector) collectCheckpoint(ch chan<- prometheus.Metric, cp namedCheckpoint) {
	counts, err := cp.read()
	if err != nil {
		c.m.log.Warn().Str("event", "metrics_read_failed").Str("checkpoint", cp.name).Err(err).
			Msg("metrics: the checkpoint's counts could not be read for this scrape")
		gauge(ch, descCheckpointUp, 0, cp.name)
		return
	}
	gauge(ch, descCheckpointUp, 1, cp.name)
	for _, st := range storage.States() {
		gauge(ch, descCheckpointURLs, float64(counts[st]), cp.name, strings.ToLower(st.String()))
	}
}
