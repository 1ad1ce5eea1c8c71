package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// crawl is one run: the collector with every extension wired in, the
// output, and what the end of the run needs to decide and report. Later
// extensions add themselves in newCrawl: to exts, judges and reportOpts,
// and their Close to closers.
type crawl struct {
	cfg     Config
	log     zerolog.Logger
	c       *colly.Collector
	v       *validate.Validator
	b       *breaker.Breaker
	cp      *checkpoint.Checkpoint // the checkpoint file; nil with -redis
	cpStore storage.Store          // the file under cp
	out     *sink
	shared  *shared       // -redis: the crawl in Redis; nil for the checkpoint file
	reach   *reach        // whether the start hosts answer at all
	robots  *robotsPolicy // --obey-robots, or nil

	exts       []breakwater.Extension // registered in order
	judges     []outcome.Judge        // asked how the run ended
	reportOpts []report.Sources       // sources of the report
	closers    []func() error         // run after the crawl, in reverse
	metrics    *metrics.Metrics       // -metrics, or nil
	registry   *prometheus.Registry

	cancel context.CancelFunc // aborts requests in flight (second signal)

	stopping    atomic.Bool  // no new requests
	interrupted atomic.Value // the signal's name, once one arrived
	cut         atomic.Int64 // requests and links dropped because the run was stopping
	scheduled   atomic.Int64 // requests scheduled, against -max-pages
	capped      atomic.Bool  // -max-pages was reached
	errOnce     sync.Once    // the crawl's own first error
	err         error
	started     time.Time

	volMu     sync.Mutex                 // guards the two below
	latencies map[string][]time.Duration // every success's latency, by domain, for the report's medians
	bytes     map[string]int64           // body bytes received, by domain
}

// newCrawl builds the run from a checked Config. Nothing is sent yet.
func newCrawl(cfg Config, log zerolog.Logger) (*crawl, error) {
	cr := &crawl{cfg: cfg, log: log, latencies: map[string][]time.Duration{}, bytes: map[string]int64{},
		reach: newReach(log, cfg.startHosts)}
	var err error

	// Validation rules per page type: a product page needs the product
	// (its title by default) and the byte floor that catches consent
	// shells; every other page is judged by the listing structure it must
	// have (a consent shell has none), so a short, empty listing is a valid
	// page with nothing on it: the run ends empty, not failed. Without a
	// listing structure to require, the floor judges them too.
	product := []validate.Check{validate.MinBytes(cfg.MinBytes), validate.Require(cfg.Require...)}
	listing := []validate.Check{validate.MinBytes(cfg.MinBytes)}
	if len(cfg.ListingRequire) > 0 {
		listing = []validate.Check{validate.MinBytes(0), validate.Require(cfg.ListingRequire...)}
	}
	vcfg := validate.Config{Checks: listing, Pages: []validate.Page{{Pattern: cfg.ProductURL, Checks: product}}, Logger: log}
	if cr.v, err = validate.New(vcfg); err != nil {
		return nil, usageErr("validation rules: %v", err)
	}
	// The crawl's state: the checkpoint file, or the crawl in Redis (its
	// queue, visited set and circuits; see redis.go).
	// The pace caps each domain at -parallelism requests from the gate to
	// their outcome. Colly frees a LimitRule slot once the body is read,
	// before the outcome reaches the circuit, so without the cap a request
	// waiting for that slot could pass the gate while the failure that
	// trips the circuit is on its way (one request past the bound).
	bcfg := breaker.Config{Profile: cfg.profile, Domains: cfg.profileDomains, Validator: cr.v, Logger: log, OnAttempt: cr.onOutcome, Pacing: breaker.Pacing{Parallelism: cfg.Parallelism}}
	if cfg.Redis != "" {
		if cr.shared, err = openShared(cfg, log); err != nil {
			return nil, err
		}
		cr.shared.configure(&bcfg)
	} else {
		if cr.cp, cr.cpStore, err = openCheckpoint(cfg, log, cr.fail); err != nil {
			return nil, err
		}
	}
	var m *metrics.Metrics
	var reg *prometheus.Registry
	if cfg.Metrics != "" {
		reg = prometheus.NewRegistry()
		if m, err = metrics.New(reg, metrics.Config{Logger: log}); err != nil {
			cr.abandon()
			return nil, err
		}
	}
	if cr.b, err = breaker.New(bcfg); err != nil {
		cr.abandon()
		return nil, usageErr("breaker: %v", err)
	}
	if m != nil {
		if err := m.Observe(cr.b); err != nil {
			cr.abandon()
			return nil, err
		}
		if cr.shared != nil {
			err = m.WatchQueue("redis:"+cfg.CrawlID, cr.shared.depth)
		} else {
			err = m.WatchCheckpoint(cfg.Checkpoint, cr.cp.Counts)
		}
		if err != nil {
			cr.abandon()
			return nil, err
		}
		cr.metrics, cr.registry = m, reg
	}
	// A domain saved open stays open until its cooldown ends (in Redis the
	// shared circuits keep their state themselves).
	if cr.cp != nil {
		if err := cr.cp.Observe(cr.b); err != nil {
			cr.abandon()
			return nil, err
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cr.cancel = cancel
	// With -redis the collector is synchronous: the queue's threads are
	// the worker's parallelism (an Async collector would claim every ready
	// job of the crawl at once and hold them in goroutines).
	copts := []colly.CollectorOption{colly.StdlibContext(ctx)}
	if cr.shared == nil {
		copts = append(copts, colly.Async(true))
	}
	cr.c = colly.NewCollector(copts...)
	cr.c.SetRequestTimeout(cfg.Timeout)
	cr.c.MaxDepth = cfg.MaxDepth
	if cfg.UserAgent != "" {
		cr.c.UserAgent = cfg.UserAgent
	}
	cr.c.AllowedDomains = cfg.startDomain
	for _, rule := range limitRules(cfg) {
		if err := cr.c.Limit(rule); err != nil {
			cancel()
			cr.abandon()
			return nil, usageErr("limit rule %s%s: %v", rule.DomainRegexp, rule.DomainGlob, err)
		}
	}

	// A worker of a crawl in Redis continues its -out file as --resume
	// does: a page fetched again (its job came back after a lease, say) is
	// never written twice to one file.
	if cr.out, err = openSink(cfg.Out, cfg.Resume || cr.shared != nil, cfg.Fields); err != nil {
		cancel()
		cr.abandon()
		return nil, err
	}
	cr.closers = append(cr.closers, cr.out.close)

	// The stop gate runs before every extension, so a request cut by a
	// stop is never counted as anything by them.
	cr.c.OnRequest(cr.gate)
	cr.c.OnRequestHeaders(cr.gate)
	if len(cfg.pacing.Pacing()) > 0 {
		// -profiles' pacing: each host's least gap, set the first time a
		// request for it comes, before the breaker paces it.
		var mu sync.Mutex
		seen := map[string]bool{}
		cr.c.OnRequest(func(r *colly.Request) {
			h := strings.ToLower(r.URL.Host)
			mu.Lock()
			first := !seen[h]
			seen[h] = true
			mu.Unlock()
			if gap, ok := cfg.pacing.MinGap(h); first && ok {
				if err := cr.b.SetMinGap(h, gap); err != nil {
					log.Error().Str("event", "pacing_failed").Str("domain", h).Err(err).Msg("cannot set the domain's least gap")
				}
			}
		})
	}
	if cfg.ObeyRobots {
		// Before the breaker, which wraps this transport and sees a
		// request robots.txt refused as the crawler's own choice.
		cr.robots = newRobotsPolicy(log, cfg.Timeout, func() string { return cr.c.UserAgent }, cr.b, cfg.profile.Cooldown, cfg.MaxCrawlDelay)
		cr.c.WithTransport(robotsTransport{base: http.DefaultTransport})
		cr.c.OnRequest(cr.robots.onRequest)
		cr.c.OnResponseHeaders(cr.robots.onResponseHeaders)
		cr.judges = append(cr.judges, cr.robots)
	}
	// The validator before the breaker that consults it; the checkpoint
	// last, so it sees the breaker's refusals before its own OnRequest.
	if cr.shared == nil {
		cr.exts = append(cr.exts, cr.v, cr.b, cr.cp)
		cr.judges = append(cr.judges, cr.b, cr.v, retryHint{cr.cp}) // open circuits; selector_broken; unfinished and dead URLs
	} else {
		// The shared storage last: it is Colly's storage (the visited set
		// claimed in Redis) and learns which request is which job. What
		// is left is the crawl's queue's to say: this worker's breaker
		// lists only its own refusals.
		cr.exts = append(cr.exts, cr.v, cr.b, cr.shared.cs)
		cr.judges = append(cr.judges, withoutKind{cr.b, []string{"unfinished"}}, cr.v, cr.shared.judge(cfg.Timeout))
	}
	cr.judges = append(cr.judges, cr.reach)
	cr.reportOpts = append(cr.reportOpts, report.Sources{Breaker: cr.b, Validator: cr.v})
	if cfg.format == report.HTML {
		// The page draws each domain over time: the timeline follows the
		// breaker from here on.
		tl := report.NewTimeline(report.TimelineConfig{})
		if err := tl.Observe(cr.b); err != nil {
			cancel()
			cr.out.close()
			cr.abandon()
			return nil, err
		}
		cr.reportOpts = append(cr.reportOpts, report.Sources{Timeline: tl})
	}
	if err := breakwater.Use(cr.c, cr.exts...); err != nil {
		return nil, err
	}
	// Registered after the validator: the verdict is complete here.
	cr.c.OnHTML("html", cr.onPage)
	cr.c.OnResponse(func(r *colly.Response) { cr.received(r) })
	cr.c.OnError(func(r *colly.Response, _ error) { cr.received(r) })
	if cr.metrics != nil {
		srv, err := metrics.Serve(ctx, cfg.Metrics, cr.registry)
		if err != nil {
			cancel()
			cr.out.close()
			cr.abandon()
			return nil, fmt.Errorf("productcrawl: -metrics %s: %w", cfg.Metrics, err)
		}
		log.Info().Str("event", "metrics_serving").Str("url", srv.URL()).Msg("serving Prometheus metrics")
		// Closers run in reverse: the endpoint closes first, so nothing
		// scrapes a closed checkpoint.
		cr.closers = append(cr.closers, srv.Close)
	}
	return cr, nil
}

// limitRules are the collector's LimitRules: one per start host, matched
// against the host as Colly sees it (storage.Identify), because a rule's
// Parallelism is one pool shared by every host it matches
// and a catch-all would let a slow store hold the
// slots of a healthy one. The last rule is for hosts reached by redirect;
// those share its pool.
func limitRules(cfg Config) []*colly.LimitRule {
	var rules []*colly.LimitRule
	for _, h := range cfg.startHosts {
		rules = append(rules, &colly.LimitRule{DomainRegexp: "(?i)^" + regexp.QuoteMeta(h) + "$", Parallelism: cfg.Parallelism})
	}
	return append(rules, &colly.LimitRule{DomainGlob: "*", Parallelism: cfg.Parallelism})
}

// release closes the Redis client, once the report is built and the status
// display, which reads the shared breakers, has stopped.
func (cr *crawl) release() {
	if cr.shared != nil {
		if err := cr.shared.close(); err != nil {
			cr.log.Warn().Str("event", "redis_close_failed").Err(err).Msg("closing the Redis client")
		}
	}
}

// abandon closes what newCrawl opened when it cannot finish.
func (cr *crawl) abandon() {
	if cr.cp != nil {
		cr.closeCheckpoint()
	}
	if cr.shared != nil {
		cr.shared.close()
	}
}

// gate drops requests once the run is stopping: in OnRequest for those not
// yet queued, in OnRequestHeaders for those that were waiting for a slot.
// With -redis each goes back to the crawl's queue for another worker.
func (cr *crawl) gate(r *colly.Request) {
	if cr.stopping.Load() && !r.IsAbort() {
		r.Abort()
		cr.cut.Add(1)
		if cr.shared != nil {
			cr.shared.giveBack(r)
		}
	}
}

// onPage scores nothing itself: the validator did. A valid product page
// becomes a record; links are followed from valid pages only.
func (cr *crawl) onPage(e *colly.HTMLElement) {
	crashAtPage()
	verdict, ok := cr.v.VerdictOf(e.Response)
	if !ok || !verdict.Valid() {
		return
	}
	u := e.Request.URL
	if cr.cfg.productRE.MatchString(u.String()) {
		rec := record{URL: u.String(), Host: u.Host, FetchedAt: time.Now()}
		for _, f := range cr.cfg.Fields {
			rec.Values = append(rec.Values, value{Name: f.Name, Text: text(e.DOM.Find(f.Selector).First())})
		}
		if err := cr.out.write(rec); err != nil {
			cr.fail(err)
		}
	}
	e.DOM.Find(cr.cfg.Follow).Each(func(_ int, s *goquery.Selection) {
		if href, ok := s.Attr("href"); ok {
			cr.visit(e.Request, e.Request.AbsoluteURL(href))
		}
	})
}

// text is the element's text with its whitespace collapsed.
func text(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }

// visit schedules u, from parent (nil for a start URL), within -max-pages.
func (cr *crawl) visit(parent *colly.Request, u string) {
	if u == "" {
		return
	}
	if cr.shared != nil {
		cr.enqueue(parent, u)
		return
	}
	if seen, _ := cr.c.HasVisited(u); seen {
		return
	}
	if cr.robots != nil {
		if pu, _, err := storage.Identify(u, nil); err == nil && !cr.robots.allowed(pu) {
			return
		}
	}
	if cr.stopping.Load() {
		cr.cut.Add(1)
		return
	}
	if n := cr.scheduled.Add(1); cr.cfg.MaxPages > 0 && n > int64(cr.cfg.MaxPages) {
		cr.scheduled.Add(-1)
		if !cr.capped.Swap(true) {
			cr.log.Info().Str("event", "max_pages").Int("max_pages", cr.cfg.MaxPages).
				Msg("-max-pages reached: no more links are followed")
		}
		return
	}
	var err error
	if parent != nil {
		err = parent.Visit(u)
	} else {
		err = cr.c.Visit(u)
	}
	if err == nil {
		return
	}
	cr.scheduled.Add(-1)
	var seen *colly.AlreadyVisitedError
	switch {
	case errors.As(err, &seen):
	case parent == nil:
		cr.fail(fmt.Errorf("start URL %s: %w", u, err))
	default:
		cr.log.Debug().Str("event", "not_followed").Str("url", u).Err(err).Msg("link not followed")
	}
}

// enqueue adds u to the crawl's queue in Redis (a no-op for a URL the
// crawl has seen). Colly checks AllowedDomains only when a job is fetched,
// and a job it refuses then would come back until it is dead: so hosts
// are filtered here. Never HasVisited: with the shared storage, asking is
// claiming.
func (cr *crawl) enqueue(parent *colly.Request, u string) {
	if cr.stopping.Load() {
		cr.cut.Add(1)
		return
	}
	pu, _, err := storage.Identify(u, nil)
	if err != nil || !slices.Contains(cr.cfg.startDomain, strings.ToLower(pu.Hostname())) {
		cr.log.Debug().Str("event", "not_followed").Str("url", u).Msg("link not followed: not a start host")
		return
	}
	if cr.robots != nil && !cr.robots.allowed(pu) {
		return
	}
	if err := cr.shared.q.AddURL(u); err != nil {
		if parent == nil {
			cr.fail(fmt.Errorf("start URL %s: %w", u, err))
			return
		}
		cr.log.Warn().Str("event", "not_followed").Str("url", u).Err(err).Msg("link not added to the crawl's queue")
	}
}

// received counts r's body bytes for the report.
func (cr *crawl) received(r *colly.Response) {
	if r == nil || r.Request == nil || len(r.Body) == 0 {
		return
	}
	cr.volMu.Lock()
	cr.bytes[r.Request.URL.Host] += int64(len(r.Body))
	cr.volMu.Unlock()
}

// onOutcome keeps every success's latency for the report, and logs every
// attempt that left, at debug level.
func (cr *crawl) onOutcome(a observe.Attempt) {
	cr.reach.observe(a)
	if a.Result.Class == circuit.Success {
		cr.volMu.Lock()
		cr.latencies[a.Domain] = append(cr.latencies[a.Domain], a.Result.Latency)
		cr.volMu.Unlock()
	}
	if e := cr.log.Debug(); e.Enabled() {
		e.Str("event", "page").Str("url", a.Request.URL.String()).Int("status", a.Status).
			Stringer("class", a.Result.Class).Dur("latency", a.Result.Latency).AnErr("error", a.Err).Msg("page")
	}
}

// fail records the crawl's own first error (the output cannot be written,
// a start URL cannot be scheduled) and stops the run: it ends as an error.
func (cr *crawl) fail(err error) {
	cr.errOnce.Do(func() {
		cr.err = err
		cr.log.Error().Str("event", "crawl_error").Err(err).Msg("the crawl cannot go on; stopping")
		cr.stopping.Store(true)
		if cr.shared != nil {
			cr.shared.cs.Close() // no more jobs; waits for Redis end at once
		}
		// What comes back now cannot be recorded, and requests queued
		// behind ones a callback aborted would each wait for their
		// domain's room to lapse: end the waits and the requests now.
		if cr.cancel != nil {
			cr.cancel()
		}
	})
}

// interrupt stops issuing requests; those in flight finish.
func (cr *crawl) interrupt(sig os.Signal) {
	if cr.interrupted.CompareAndSwap(nil, sig.String()) {
		cr.stopping.Store(true)
		if cr.shared != nil {
			cr.shared.cs.Close() // this worker takes no more jobs; the others go on
		}
		cr.log.Warn().Str("event", "interrupted").Str("signal", sig.String()).
			Msg("stopping: no new requests; waiting for those in flight (signal again to abort them)")
		return
	}
	cr.log.Warn().Str("event", "aborted").Str("signal", sig.String()).Msg("aborting the requests in flight")
	cr.cancel()
}

// runLocal crawls with the checkpoint file as the frontier: what earlier
// runs left unfinished first, then the start URLs (skipped if the
// checkpoint knows them already).
func (cr *crawl) runLocal() {
	if cr.cfg.RetryDead {
		if err := cr.retryDead(); err != nil {
			cr.fail(err)
		}
	}
	if n, err := cr.cp.Resume(cr.c); err != nil {
		cr.fail(err)
	} else if n > 0 || cr.out.earlier > 0 {
		cr.scheduled.Add(int64(n))
		cr.log.Info().Str("event", "resumed").Str("checkpoint", cr.cfg.Checkpoint).Int("redriven", n).
			Int("parked", cr.cp.Stats().Deferred).Int64("records_before", cr.out.earlier).Int("torn_bytes_cut", cr.out.torn).
			Msg("resuming: re-driving what earlier runs did not finish")
	}
	for _, u := range cr.cfg.URLs {
		cr.visit(nil, u)
	}
	cr.c.Wait()
}

// runShared works the crawl in Redis until its queue holds nothing this
// worker should wait for. Every worker adds the start URLs (each is queued
// once per crawl); what earlier runs left is in the queue already, so
// there is nothing to resume.
func (cr *crawl) runShared() {
	if cr.out.earlier > 0 || cr.out.torn > 0 {
		cr.log.Info().Str("event", "out_continued").Str("out", cr.cfg.Out).Int64("records_before", cr.out.earlier).
			Int("torn_bytes_cut", cr.out.torn).Msg("-out holds records of earlier runs: they count, and none is written again")
	}
	for _, u := range cr.cfg.URLs {
		cr.visit(nil, u)
	}
	if err := cr.shared.q.Run(cr.c); err != nil {
		cr.fail(fmt.Errorf("the crawl's queue in Redis: %w", err))
	}
	cr.shared.cs.Close()
}

// run crawls from the start URLs until there is nothing left to do or the
// run is stopped, and returns how it ended and its report.
func (cr *crawl) run() (outcome.Outcome, report.Report) {
	cr.started = time.Now()
	cr.log.Info().Str("event", "crawl_started").Strs("start", cr.cfg.URLs).Str("profile", cr.cfg.profile.Name).
		Int("parallelism", cr.cfg.Parallelism).Str("out", cr.cfg.Out).Msg("crawl started")
	if cr.shared != nil {
		cr.runShared()
	} else {
		cr.runLocal()
	}
	cr.cancel()
	for i := len(cr.closers) - 1; i >= 0; i-- {
		if err := cr.closers[i](); err != nil {
			cr.fail(err)
		}
	}

	judges := cr.judges
	if sig, _ := cr.interrupted.Load().(string); sig != "" && cr.cut.Load() > 0 {
		judges = append(judges, interruptedJudge{signal: sig, cut: cr.cut.Load()})
	}
	records, perHost := cr.out.counts()
	o := outcome.Decide(records, append(judges, outcome.Failed(cr.err))...)
	// The checkpoint last: it saves the outcome, the stop time and the
	// open circuits. If that fails, the run is an error.
	if cr.cp != nil {
		cr.cp.SetOutcome(o)
		if err := cr.closeCheckpoint(); err != nil && o.State != outcome.Error {
			cr.fail(err)
			o = outcome.Decide(records, append(judges, outcome.Failed(cr.err))...)
		}
	}

	ended := time.Now()
	opts := append(cr.reportOpts, report.Sources{Records: perHost, Start: cr.started, End: ended})
	cr.volMu.Lock()
	opts = append(opts, report.Sources{Latencies: cr.latencies, Bytes: cr.bytes})
	cr.volMu.Unlock()
	if cr.robots != nil {
		opts = append(opts, report.Sources{Robots: cr.robots.counts()})
	}
	if cr.cp != nil {
		// The checkpoint knows what is left better than the breaker: URLs
		// queued but never sent, and those of earlier runs.
		if pending, err := pendingByDomain(cr.cfg.Checkpoint); err != nil {
			cr.log.Warn().Str("event", "checkpoint_unreadable").Err(err).Msg("cannot count the checkpoint's unfinished URLs for the report")
		} else {
			opts = append(opts, report.Sources{Unfinished: pending})
		}
	}
	r := report.New(o, opts...)
	ev := cr.log.Info()
	if o.State != outcome.Complete {
		ev = cr.log.Warn()
	}
	ev.Str("event", "run_finished").Stringer("state", o.State).Int("exit_code", o.State.ExitCode()).
		Int64("records", o.Records).Strs("domains", o.Domains).Str("reason", o.Reason).
		Float64("took_s", r.TookS).Msg("run finished: " + o.State.String())
	return o, r
}
