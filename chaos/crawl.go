package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	bw "github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/internal/requestid"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// runOut is what one run of a crawl left: how it ended and what it wrote.
type runOut struct {
	start, end time.Time
	exit       int  // the outcome's exit code (-1: the run did not end)
	hung       bool // did not end within the case's bound
	crashed    bool // sent SIGQUIT while it ran: it crashed
	outcome    outcome.Outcome
	report     string // productcrawl's last log lines, for -keep
	// refused is set when the run refused its checkpoint at open.
	refused bool
	openErr error
	// cpStates and cpErrs are the checkpoint's state and last error of
	// each promised URL, read before it closed (in-process only).
	cpStates map[string]storage.State
	cpErrs   map[string]string
	carried  int64 // requests the user's transport carried (-1: none installed)
	// handBacks counts the throttled URLs a Redis worker's breaker handed
	// back to the queue (its log's handed_back events).
	handBacks int
	// carriedPaths counts them by host and path, to name what went past.
	carriedPaths map[string]int
	// dormant is how many times a sweep left a domain compacted
	// (Wiring.IdleTTL): the revivals the crawl went through, or nearly.
	dormant int
}

// countingTransport is a user's own transport: it counts what it carries.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64

	mu    sync.Mutex
	paths map[string]int // host+path → requests carried
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	t.mu.Lock()
	if t.paths == nil {
		t.paths = map[string]int{}
	}
	t.paths[r.URL.Host+r.URL.Path]++
	t.mu.Unlock()
	return t.base.RoundTrip(r)
}

// carriedPaths is a copy of what t carried, by host and path.
func (t *countingTransport) carriedPaths() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int, len(t.paths))
	for k, v := range t.paths {
		out[k] = v
	}
	return out
}

// output is the user's output: the product URLs the scraper saved, in
// order, over every run of the case.
type output struct {
	mu   sync.Mutex
	urls []string
}

func (o *output) add(u string) {
	o.mu.Lock()
	o.urls = append(o.urls, u)
	o.mu.Unlock()
}

func (o *output) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.urls)
}

// crawlLib runs the library in-process, wired as w says, over sites, until
// Wait returns, ctx ends it, or bound passes (then it is torn down and the
// run is hung). resume continues the checkpoint (dir/crawl.db, or mem).
// promised is called before the checkpoint closes, to read the states of
// the URLs the stores promised.
func crawlLib(ctx context.Context, w Wiring, sites []*site, dir string, out *output, resume bool, mem storage.Store, bound time.Duration, promised func() []string) runOut {
	ro := runOut{exit: -1, carried: -1}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := []colly.CollectorOption{colly.StdlibContext(ctx)}
	if w.Async {
		opts = append(opts, colly.Async(true))
	}
	c := colly.NewCollector(opts...)
	c.SetRequestTimeout(w.Timeout)
	var ct *countingTransport
	if w.Transport {
		ct = &countingTransport{base: &http.Transport{MaxIdleConnsPerHost: 16}}
		c.WithTransport(ct)
	}
	switch w.Limit {
	case limGlob:
		_ = c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: w.LimitP})
	case limPerHost:
		for _, s := range sites {
			_ = c.Limit(&colly.LimitRule{DomainRegexp: "^" + regexp.QuoteMeta(s.host) + "$", Parallelism: w.LimitP})
		}
	}

	var v *validate.Validator
	var err error
	// The README's Usage validator is these page rules (once, its
	// snippet once applied the product selector to every page, and a
	// healthy store with small listing pages tripped). ReadmeValidator
	// still draws the README's wiring; today that is the same validator.
	v, err = validate.New(
		validate.Page("/products/", validate.MinBytes(1024), validate.Require(testserver.TitleSelector)),
		validate.MinBytes(0), validate.Require("ul.products"))
	if err != nil {
		ro.openErr = fmt.Errorf("validator: %w", err)
		return ro
	}
	var bopts []breaker.Option
	bopts = append(bopts, breaker.With(breaker.Config{Validator: v, IdleTTL: w.IdleTTL}))
	if w.Pacing > 0 {
		bopts = append(bopts, breaker.With(breaker.Config{Pacing: breaker.Pacing{Parallelism: w.Pacing}}))
	}
	var cp *checkpoint.Checkpoint
	switch w.Checkpoint {
	case cpMemory:
		cp, err = checkpoint.New(mem)
	case cpBolt:
		var st *bolt.Store
		if st, err = bolt.Open(filepath.Join(dir, "crawl.db")); err != nil {
			break
		}
		defer st.Close() // after cp.Close
		cp, err = checkpoint.New(st)
	}
	if err != nil {
		ro.refused, ro.openErr = true, err
		return ro
	}
	if cp != nil {
		bopts = append(bopts, cp.BreakerOptions()...)
	}
	b, err := breaker.New(w.Profile, bopts...)
	if err != nil {
		ro.openErr = fmt.Errorf("breaker: %w", err)
		if cp != nil {
			cp.Close()
		}
		return ro
	}
	exts := []bw.Extension{v, b}
	if cp != nil {
		if err := cp.Breaker(b); err != nil {
			ro.openErr = fmt.Errorf("checkpoint breaker: %w", err)
			cp.Close()
			return ro
		}
		exts = append(exts, cp)
	}
	bw.Use(c, exts...)

	// The user's scraper: follow listing and product links, save every
	// product title, retry failures up to 3 times. With an IdleTTL it
	// works in two phases, as many scrapers do: walk the listings and
	// collect the product links, then fetch the products. Between them
	// every domain rests long enough to be compacted; the products
	// revive it.
	var later struct {
		mu   sync.Mutex
		urls []string
	}
	c.OnHTML(testserver.ProductLinkSelector+", "+testserver.NextSelector, func(e *colly.HTMLElement) {
		href := e.Attr("href")
		if w.HasVisited {
			if seen, err := c.HasVisited(e.Request.AbsoluteURL(href)); err == nil && seen {
				return
			}
		}
		if w.IdleTTL > 0 && e.DOM.Is(testserver.ProductLinkSelector) {
			later.mu.Lock()
			later.urls = append(later.urls, e.Request.AbsoluteURL(href))
			later.mu.Unlock()
			return
		}
		_ = e.Request.Visit(href)
	})
	var records atomic.Int64
	c.OnHTML(testserver.TitleSelector, func(e *colly.HTMLElement) {
		records.Add(1)
		out.add(e.Request.URL.String())
	})
	if w.RetryLoop {
		var mu sync.Mutex
		tries := map[string]int{}
		c.OnError(func(r *colly.Response, _ error) {
			u := r.Request.URL.String()
			mu.Lock()
			tries[u]++
			n := tries[u]
			mu.Unlock()
			if n <= 3 {
				_ = r.Request.Retry()
			}
		})
	}

	done := make(chan struct{})
	var swept chan int // the sweeper's count of compacted domains, once done
	if w.IdleTTL > 0 {
		// The breaker sweeps when a new domain comes; a case's few
		// domains all come at once. Sweep as a user in a long crawl
		// would, so that resting domains are compacted mid-crawl and
		// their next request revives them.
		swept = make(chan int, 1)
		go func() {
			n := 0
			defer func() { swept <- n }()
			tick := time.NewTicker(w.IdleTTL / 2)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-ctx.Done(): // ended, or left behind stuck
					return
				case <-tick.C:
					b.Sweep()
					n += b.Overview(0).Compacted
				}
			}
		}()
	}
	go func() {
		defer close(done)
		if cp != nil && resume {
			if _, err := cp.Resume(c); err != nil {
				ro.openErr = fmt.Errorf("resume: %w", err)
			}
		}
		for _, s := range sites {
			_ = c.Visit(s.url + "/")
		}
		c.Wait()
		if w.IdleTTL == 0 {
			return
		}
		// Phase 2, after a rest. Once the run is cancelled its visits
		// fail at once, and the checkpoint keeps them unfinished: none is
		// left only in this list.
		select {
		case <-time.After(2*w.IdleTTL + w.IdleTTL/2):
		case <-ctx.Done():
		}
		later.mu.Lock()
		urls := later.urls
		later.mu.Unlock()
		for _, u := range urls {
			_ = c.Visit(u)
		}
		c.Wait()
	}()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		ro.hung = true
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			// Still stuck after its context ended: leave it behind.
			return ro
		}
	}
	if swept != nil {
		ro.dormant = <-swept
	}
	ro.outcome = outcome.Decide(records.Load(), nil, v, b, optJudge(cp))
	ro.exit = ro.outcome.ExitCode()
	if ct != nil {
		ro.carried = ct.n.Load()
		ro.carriedPaths = ct.carriedPaths()
	}
	if cp != nil {
		cp.SetOutcome(ro.outcome)
		ro.cpStates, ro.cpErrs = map[string]storage.State{}, map[string]string{}
		for _, u := range promised() {
			rec, ok, err := cp.Store().Get(requestid.Of(u, nil))
			if err == nil && ok {
				ro.cpStates[u], ro.cpErrs[u] = rec.State, rec.LastError
			}
		}
		if err := cp.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
			ro.openErr = fmt.Errorf("checkpoint close: %w", err)
		}
	}
	return ro
}

// optJudge is cp as a Judge, or nil (Decide skips a nil judge).
func optJudge(cp *checkpoint.Checkpoint) outcome.Judge {
	if cp == nil {
		return nil
	}
	return cp
}

// newMemory is the memory store a case's checkpoint lives on.
func newMemory() storage.Store { return memory.New() }
