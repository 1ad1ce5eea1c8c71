package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bw "github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/internal/benchtest"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// The goals for a broad crawl.
const (
	broadRatioGoal       = 0.95 // broad: of plain Colly's pages/s (or CPU per page, -judge)
	smallAddedCPUGoal    = 25   // broad-small: µs of CPU a page above plain Colly's
	smallActiveBytesGoal = 600  // broad-small: heap bytes per active domain
	broadPages           = 2    // pages per domain
	broadWorkers         = 64   // goroutines visiting, for both clients
)

// broadKind is one of the two broad scenarios: the page every domain
// serves, and how many domains by default.
type broadKind struct {
	name    string
	pageKB  string // the page's size, for people
	page    func(n int) []byte
	domains int // default -domains
}

var (
	// broadLarge serves the overhead scenario's page (testserver's
	// product page, about 38 KB).
	broadLarge = broadKind{name: "broad", pageKB: "38 KB", domains: 50_000,
		page: func(n int) []byte { return testserver.Catalog{Products: broadPages}.ProductPage(n) }}
	// broadSmall serves a 1.5 KB page, which leaves little but the
	// per-request work of Colly and of the extensions.
	broadSmall = broadKind{name: "broad-small", pageKB: "1.5 KB", domains: 1_000_000, page: smallProductPage}
)

// domainsFor is how many domains kind crawls: -domains, or its default.
func (e *env) domainsFor(kind broadKind) int {
	if e.size.broadDomains > 0 {
		return e.size.broadDomains
	}
	return kind.domains
}

// broadIdleTTL is the breaker's idle TTL in the broad scenario: short, so
// that a run of a minute reaches the steady state a crawl of hours has
// (the default is 5 minutes); the fleet guard's Active span matches it.
const broadIdleTTL = 2 * time.Second

// memTransport answers every request from memory with a healthy product
// page: a million hosts, no sockets.
type memTransport struct {
	pages [][]byte // pages[n-1] is product n
}

func newMemTransport(n int, page func(int) []byte) *memTransport {
	t := &memTransport{pages: make([][]byte, n)}
	for i := range t.pages {
		t.pages[i] = page(i + 1)
	}
	return t
}

// smallProductPage is a valid product page of about 1.5 KB (testserver's
// selectors match it, and it clears the validator's 1 KB floor) rather
// than testserver's 40 KB: parsing those is 77 % of plain Colly's CPU,
// which would hide the crawler's own cost per page, the cost this
// scenario compares, and make a million domains take half an hour per
// client.
func smallProductPage(n int) []byte {
	return []byte(fmt.Sprintf(`<!doctype html><html><head><title>Product %d</title></head><body>`+
		`<div class="product"><h1 class="title">Product %d</h1><span class="price">$%d.99</span>`+
		`<p class="description">%s</p></div></body></html>`, n, n, 10+n, strings.Repeat("A sturdy thing, well made, sold here. ", 36)))
}

func (t *memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, productPrefix))
	if err != nil || n < 1 || n > len(t.pages) {
		return &http.Response{StatusCode: 404, Status: "404 Not Found", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	page := t.pages[n-1]
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"text/html; charset=utf-8"}},
		Body:          io.NopCloser(bytes.NewReader(page)),
		ContentLength: int64(len(page)), Request: r}, nil
}

// broadURL is the i-th URL of a broad crawl over n domains: page 1 of
// every domain, then page 2, as a frontier over many sites queues them.
func broadURL(i, n int) string {
	return "http://shop-" + strconv.Itoa(i%n) + ".test" + testserver.ProductPath(i/n+1)
}

// broadRun is what one client's broad run measured.
type broadRun struct {
	wall       time.Duration
	saved      int64
	peakRSS    int64 // bytes; 0 if unknown
	heapAll    int64 // heap after GC at the end, everything alive, over the heap before
	heapState  int64 // Breakwater: the same with the collector and checkpoint let go (breaker, validator, metrics)
	heapActive int64 // Breakwater, a run keeping every domain whole: heapState before any compaction
	series     int   // metrics: series in the last scrape
	scrape     time.Duration
	scrapeMax  time.Duration // the slowest scrape taken during the run
	compacted  int
	cpuPerPage time.Duration // the process's CPU time per page saved
	gcPerPage  time.Duration // of which the garbage collector's (the runtime's estimate)
}

func runBroad(e *env, kind broadKind) ([]Result, error) {
	n := e.domainsFor(kind)
	rt := newMemTransport(broadPages, kind.page)
	rows := []Result{
		{Scenario: kind.name, Client: plain.String(), Pages: n * broadPages, IntoFailure: -1},
		{Scenario: kind.name, Client: breakwater.String(), Pages: n * broadPages, IntoFailure: -1},
	}
	// Rounds with the two clients taking turns to go first, so that load
	// from elsewhere costs both alike; each keeps its best round's figures
	// and every round's pages/s and CPU per page.
	runs := make([]broadRun, 2)
	for round := range max(e.size.broadRounds, 1) {
		for j := range 2 {
			i := (j + round) % 2
			k := []client{plain, breakwater}[i]
			run, err := broadCrawl(e, kind, k, n, rt, false)
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", kind.name, k, err)
			}
			pps := float64(run.saved) / run.wall.Seconds()
			e.say("%-14s %-10s round %d: %d pages of %d domains in %v, %.0f pages/s, %.1f µs CPU/page", kind.name, k, round+1, run.saved, n, run.wall.Round(time.Millisecond), pps, us(run.cpuPerPage))
			r := &rows[i]
			r.Rounds = append(r.Rounds, pps)
			r.CPURounds = append(r.CPURounds, us(run.cpuPerPage))
			if pps > r.PagesPerSec {
				r.PagesPerSec = pps
				runs[i].wall, runs[i].saved, runs[i].cpuPerPage, runs[i].gcPerPage = run.wall, run.saved, run.cpuPerPage, run.gcPerPage
			}
			// Memory: the worst round's, so that no lucky collection meets
			// the goal.
			runs[i].peakRSS = max(runs[i].peakRSS, run.peakRSS)
			runs[i].heapAll = max(runs[i].heapAll, run.heapAll)
			runs[i].heapState = max(runs[i].heapState, run.heapState)
			runs[i].series = max(runs[i].series, run.series)
			runs[i].scrape = max(runs[i].scrape, run.scrape)
			runs[i].scrapeMax = max(runs[i].scrapeMax, run.scrapeMax)
			runs[i].compacted = run.compacted
		}
	}
	// The heap of active domains: one more Breakwater run, not timed,
	// that keeps every domain whole (IdleTTL < 0), as a crawl keeps the
	// domains it used within the idle TTL (5 minutes by default).
	active, err := broadCrawl(e, kind, breakwater, n, rt, true)
	if err != nil {
		return nil, fmt.Errorf("%s, %s keeping every domain whole: %w", kind.name, breakwater, err)
	}
	runs[1].heapActive = active.heapActive
	for i := range rows {
		r, run := &rows[i], runs[i]
		r.Saved, r.Wall, r.Requests = int(run.saved), Duration(run.wall), int(run.saved)
		r.judgeRounds(e, rows[0])
		r.PagesPerSRatio = r.WallRatio.Median
		r.Domains = n
		r.PeakRSS = run.peakRSS
		r.CPUPerPage = Duration(run.cpuPerPage)
		r.HeapAllPerDomain = float64(run.heapAll) / float64(n)
		r.HeapPerDomain = r.HeapAllPerDomain // plain Colly: its visited set, the only state it keeps per domain
		r.Measured = fmt.Sprintf("the reference: best %.0f pages/s, CPU/page median %.1f µs, %.1f in the fastest round (GC %.1f); heap %.0f B/domain; peak RSS %s", r.PagesPerSec, r.CPUPerPageMedian, us(run.cpuPerPage), us(run.gcPerPage), r.HeapPerDomain, mib(run.peakRSS))
		if i == 1 {
			r.HeapPerDomain = float64(run.heapActive) / float64(n)
			r.BytesPerDomain = float64(run.heapState) / float64(n)
			r.MetricsSeries = run.series
			r.ScrapeSeconds = run.scrape.Seconds()
			r.ScrapeMaxSeconds = run.scrapeMax.Seconds()
			r.Compacted = run.compacted
			r.Measured = fmt.Sprintf("pages/s %s, CPU/page %s plain, judged on %s; best %.0f pages/s; CPU/page median %.1f µs, %.1f in the fastest round (GC %.1f), %.1f µs above plain (median of the rounds); breaker+validator+metrics+checkpoint state %.0f B per active domain, %.0f B per idle domain (%d of %d compacted), everything with the checkpoint's records %.0f B/domain; peak RSS %s; %d series, scrape %v (slowest during the run %v)",
				r.WallRatio, r.CPURatio, e.judge, r.PagesPerSec, r.CPUPerPageMedian, us(run.cpuPerPage), us(run.gcPerPage), r.AddedCPUPerPage, r.HeapPerDomain, r.BytesPerDomain, run.compacted, n, r.HeapAllPerDomain, mib(run.peakRSS), run.series,
				run.scrape.Round(time.Microsecond), run.scrapeMax.Round(time.Microsecond))
			r.Goal = broadGoal(e, kind, r, n)
		}
	}
	return rows, nil
}

// broadGoal judges Breakwater's row r of kind: broad on the ratio to
// plain Colly, broad-small on the CPU it adds a page and the heap of an
// active domain.
func broadGoal(e *env, kind broadKind, r *Result, n int) *Goal {
	if kind.name == broadSmall.name {
		return &Goal{
			Text: fmt.Sprintf("all extensions add ≤ %d µs of CPU a page to plain Colly's (%s pages, %d domains) and hold ≤ %d B per active domain",
				smallAddedCPUGoal, kind.pageKB, n, smallActiveBytesGoal),
			Met:      r.AddedCPUPerPage <= smallAddedCPUGoal && r.HeapPerDomain <= smallActiveBytesGoal && r.Saved == r.Pages,
			Measured: fmt.Sprintf("+%.1f µs a page (median of %d rounds: %.1f against %.1f), %.0f B per active domain", r.AddedCPUPerPage, len(r.CPURounds), r.CPUPerPageMedian, r.CPUPerPageMedian-r.AddedCPUPerPage, r.HeapPerDomain),
		}
	}
	return &Goal{
		Text: fmt.Sprintf("all extensions keep ≥ %.0f %% of plain Colly's %s (%s pages, %d domains)",
			100*broadRatioGoal, judgedAs(e.judge), kind.pageKB, n),
		Met:      r.Ratio >= broadRatioGoal && r.Saved == r.Pages,
		Measured: fmt.Sprintf("%.1f %% (%s, median of %d rounds)", 100*r.Ratio, e.judge, len(r.Rounds)),
	}
}

// broadCrawl crawls n domains × broadPages with client k (plain or
// Breakwater with every extension) through rt, broadWorkers goroutines
// visiting on a synchronous collector, as Colly's queue does. With
// keepWhole, Breakwater compacts no domain and the run measures only
// heapActive.
func broadCrawl(e *env, kind broadKind, k client, n int, rt http.RoundTripper, keepWhole bool) (broadRun, error) {
	var run broadRun
	heap0 := benchtest.LiveHeap()
	// The heap the previous run left is handed back to the system first:
	// the peak starts from the resident set now, not from the last run's.
	debug.FreeOSMemory()
	resetPeakRSS()

	c := colly.NewCollector()
	c.WithTransport(rt)
	c.SetRequestTimeout(defaultTimeout)
	var saved atomic.Int64
	var (
		b     *breaker.Breaker
		v     *validate.Validator
		cp    *checkpoint.Checkpoint
		m     *metrics.Metrics
		reg   *prometheus.Registry
		store *releasable
	)
	if k == plain {
		c.OnHTML(testserver.TitleSelector, func(*colly.HTMLElement) { saved.Add(1) })
	} else {
		var err error
		if v, err = validate.New(validate.Config{Checks: []validate.Check{validate.Require(testserver.TitleSelector)}, Logger: e.log}); err != nil {
			return run, fmt.Errorf("validator: %w", err)
		}
		store = &releasable{memory.New()}
		if cp, err = checkpoint.New(store, checkpoint.Config{Logger: e.log}); err != nil {
			return run, fmt.Errorf("checkpoint: %w", err)
		}
		reg = prometheus.NewRegistry()
		if m, err = metrics.New(reg, metrics.Config{}); err != nil {
			return run, fmt.Errorf("metrics: %w", err)
		}
		ttl := broadIdleTTL
		if keepWhole {
			ttl = -1
		}
		cfg := breaker.Config{Profile: breaker.Standard(), Validator: v, Pacing: breaker.Pacing{Parallelism: parallelism}, Logger: e.log, IdleTTL: ttl, Fleet: breaker.FleetGuard{Active: broadIdleTTL}}
		if b, err = breaker.New(cfg); err != nil {
			return run, fmt.Errorf("breaker: %w", err)
		}
		if err := m.Observe(b); err != nil {
			return run, err
		}
		if err := m.WatchCheckpoint("memory", cp.Counts); err != nil {
			return run, err
		}
		if err := bw.Use(c, v, b, cp); err != nil {
			return run, err
		}
		c.OnHTML(testserver.TitleSelector, func(h *colly.HTMLElement) {
			if verdict, ok := v.VerdictOf(h.Response); ok && verdict.Valid() {
				saved.Add(1)
			}
		})
	}

	// A scrape every few seconds during the run, as Prometheus would.
	stopScrape := make(chan struct{})
	var scrapes sync.WaitGroup
	if reg != nil {
		scrapes.Add(1)
		go func() {
			defer scrapes.Done()
			tick := time.NewTicker(5 * time.Second)
			defer tick.Stop()
			for {
				select {
				case <-stopScrape:
					return
				case <-tick.C:
					if d, _, err := scrape(reg); err == nil && d > run.scrapeMax {
						run.scrapeMax = d
					}
				}
			}
		}()
	}

	total := n * broadPages
	cpu0, cpuOK := processCPU()
	_, gc0 := allocatedBytes()
	var next atomic.Int64
	var visitErr atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	// Labelled, so that a -cpuprofile splits by client:
	// go tool pprof -tagfocus client=breakwater.
	labels := pprof.Labels("scenario", kind.name, "client", k.String())
	for range broadWorkers {
		wg.Add(1)
		go pprof.Do(context.Background(), labels, func(context.Context) {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				if err := c.Visit(broadURL(i, n)); err != nil && visitErr.CompareAndSwap(nil, &err) {
					e.say("%-14s %-10s first visit error: %v", kind.name, k, err) // the rest are counted by what is saved
				}
			}
		})
	}
	wg.Wait()
	run.wall = time.Since(start)
	run.saved = saved.Load()
	if cpu1, _ := processCPU(); cpuOK && run.saved > 0 {
		run.cpuPerPage = (cpu1 - cpu0) / time.Duration(run.saved)
		_, gc1 := allocatedBytes()
		run.gcPerPage = time.Duration((gc1 - gc0) * float64(time.Second) / float64(run.saved))
	}
	close(stopScrape)
	scrapes.Wait()
	run.peakRSS = peakRSS()

	if k == plain {
		run.heapAll = benchtest.LiveHeap() - heap0
		runtime.KeepAlive(c)
		return run, nil
	}
	var err error
	if keepWhole {
		// Every domain active: the extensions' state, the checkpoint's
		// records and the collector let go, before any compaction.
		if run.scrape, run.series, err = scrape(reg); err != nil {
			return run, err
		}
		if err := cp.Close(); err != nil {
			return run, fmt.Errorf("checkpoint: %w", err)
		}
		store.Store = nil
		cp, c = nil, nil
		run.heapActive = benchtest.LiveHeap() - heap0
		if e.memprof != "" {
			if err := writeHeapProfile(e.memprof + ".active"); err != nil {
				return run, err
			}
		}
		if got := b.Overview(0).Compacted; got != 0 {
			return run, fmt.Errorf("%d domains compacted in a run that keeps them whole", got)
		}
		runtime.KeepAlive(b)
		runtime.KeepAlive(v)
		runtime.KeepAlive(m)
		return run, nil
	}
	// The steady state: every domain idle past the TTL, swept. The first
	// sweep ends the period the last domains were used in.
	b.Compact()
	time.Sleep(broadIdleTTL)
	b.Compact()
	if run.scrape, run.series, err = scrape(reg); err != nil {
		return run, err
	}
	run.heapAll = benchtest.LiveHeap() - heap0
	if err := cp.Close(); err != nil {
		return run, fmt.Errorf("checkpoint: %w", err)
	}
	// The hooks keep the checkpoint reachable from the breaker: let go of
	// its records through the wrapper, to weigh the rest.
	store.Store = nil
	cp, c = nil, nil
	run.heapState = benchtest.LiveHeap() - heap0
	if e.memprof != "" {
		if err := writeHeapProfile(e.memprof); err != nil {
			return run, err
		}
	}
	run.compacted = b.Overview(0).Compacted
	runtime.KeepAlive(b)
	runtime.KeepAlive(v)
	runtime.KeepAlive(m)
	return run, nil
}

// releasable is a checkpoint store the run can let go of once the
// checkpoint is closed.
type releasable struct{ storage.Store }

// scrape gathers reg once, as a Prometheus scrape does, and counts the
// series (a histogram's buckets, sum and count each one).
func scrape(reg *prometheus.Registry) (time.Duration, int, error) {
	start := time.Now()
	mfs, err := reg.Gather()
	d := time.Since(start)
	if err != nil {
		return d, 0, fmt.Errorf("metrics: gather: %w", err)
	}
	series := 0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			series++
			if h := m.GetHistogram(); h != nil {
				series += len(h.GetBucket()) + 1
			}
		}
	}
	return d, series, nil
}

// writeHeapProfile writes the heap's live objects, as of the last GC, to
// file.
func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("-memprofile: %w", err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("-memprofile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("-memprofile: %w", err)
	}
	return nil
}

// resetPeakRSS starts the process's peak resident set size over (Linux:
// /proc/self/clear_refs), so each client's run has its own.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is the process's peak resident set size since the last reset,
// in bytes; 0 where /proc/self/status does not say.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func mib(b int64) string {
	if b <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
