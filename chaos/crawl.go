package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/rs/zerolog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bw "github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// runOut is what one run of a crawl left: how it ended and what it wrote.
type runOut struct {
	start, end time.Time
	exit       int  // the outcome's exit code (-1: the run did not end)
	hung       bool // did not end within the case's bound
	crashed    bool // sent SIGQUIT while it ran: it crashed
	quitEarly  bool // sent SIGQUIT before its run began (not judged)
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
	// refusedByColly holds the store URLs (as the store names them, not
	// through the redirecting host) that a Visit of the user's returned an
	// error for, by the error's text: Colly's own answer, read by the
	// harness, not the breaker's counters. A URL past MaxDepth is not work
	// left; one refused by MaxRequests is, and the ending must say so.
	refusedByColly map[string]string
	// timedOut counts, by the URL as the crawler sent it, the requests
	// the client's own Client.Timeout ended (the scraper's OnError saw
	// them): the store may have served those pages whole, unread.
	timedOut map[string]int
	// revisitsAsked counts the deliberate revisits Colly accepted;
	// revisitsLost names those that neither reached a response callback
	// nor OnError (Wiring.Revisits).
	revisitsAsked int
	revisitsLost  []string
	// revisitsCut names the deliberate revisits the crawl's own end
	// stopped before they were made: asked for, never made, work left.
	revisitsCut []string
	// prog is, in a program case, what the invariants read of the run
	// beside the above (sequence.go).
	prog *progRun
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
func crawlLib(ctx context.Context, w Wiring, sites []*site, dir string, out *output, resume bool, mem storage.Store, bound time.Duration, promised func() []string, redir *redirector, proxies []string) runOut {
	ro := runOut{exit: -1, carried: -1, refusedByColly: map[string]string{}, timedOut: map[string]int{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := []colly.CollectorOption{colly.StdlibContext(ctx)}
	if w.Async {
		opts = append(opts, colly.Async(true))
	}
	if w.CacheDir {
		// Kept across a resume, as a user's cache directory is.
		opts = append(opts, colly.CacheDir(filepath.Join(dir, "cache")))
	}
	if w.Revisits > 0 {
		opts = append(opts, colly.AllowURLRevisit())
	}
	if w.MaxDepth > 0 {
		opts = append(opts, colly.MaxDepth(w.MaxDepth))
	}
	if w.MaxRequests > 0 {
		opts = append(opts, colly.MaxRequests(uint32(w.MaxRequests)))
	}
	c := colly.NewCollector(opts...)
	c.SetRequestTimeout(w.Timeout)
	var ct *countingTransport
	if w.Transport {
		ct = &countingTransport{base: &http.Transport{MaxIdleConnsPerHost: 16}}
		c.WithTransport(ct)
	}
	var pool *proxy.Pool
	if len(proxies) > 0 {
		// As a user rotates a pool: the pool's ProxyFunc where Colly's
		// switcher would go, set before the breaker is registered.
		var err error
		if pool, err = proxy.New(proxy.Config{Proxies: proxies}); err != nil {
			ro.openErr = fmt.Errorf("proxy pool: %w", err)
			return ro
		}
		if ct != nil {
			ct.base.(*http.Transport).Proxy = pool.ProxyFunc()
		} else {
			c.SetProxyFunc(pool.ProxyFunc())
		}
	}
	delayed := w.Delay > 0 || w.RandomDelay > 0
	switch {
	case w.Limit == limGlob:
		_ = c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: w.LimitP, Delay: w.Delay, RandomDelay: w.RandomDelay})
	case w.Limit == limPerHost:
		for _, s := range sites {
			_ = c.Limit(&colly.LimitRule{DomainRegexp: "^" + regexp.QuoteMeta(s.host) + "$", Parallelism: w.LimitP, Delay: w.Delay, RandomDelay: w.RandomDelay})
		}
	case delayed:
		_ = c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: delayRuleP, Delay: w.Delay, RandomDelay: w.RandomDelay})
	}

	var v *validate.Validator
	var err error
	// The README's Usage validator is these page rules (once, its
	// snippet once applied the product selector to every page, and a
	// healthy store with small listing pages tripped). ReadmeValidator
	// still draws the README's wiring; today that is the same validator.
	v, err = validate.New(validate.Config{
		Checks: []validate.Check{validate.MinBytes(0), validate.Require("ul.products")},
		Pages: []validate.Page{
			{Pattern: "/products/", Checks: []validate.Check{validate.MinBytes(1024), validate.Require(testserver.TitleSelector)}},
		},
	})
	if err != nil {
		ro.openErr = fmt.Errorf("validator: %w", err)
		return ro
	}
	bcfg := breaker.Config{Profile: w.Profile, Validator: v, IdleTTL: w.IdleTTL, Proxies: pool}
	if os.Getenv("CHAOS_BREAKER_LOG") != "" {
		// A replay's post-mortem: the breaker's events beside the case's files.
		name := "breaker-1.log"
		if resume {
			name = "breaker-2.log"
		}
		if f, err := os.Create(filepath.Join(dir, name)); err == nil {
			defer f.Close()
			bcfg.Logger = zerolog.New(f).With().Timestamp().Logger()
		}
	}
	if w.Pacing > 0 {
		bcfg.Pacing = breaker.Pacing{Parallelism: w.Pacing}
	}
	var cp *checkpoint.Checkpoint
	var cpStore storage.Store // the store under cp, read at the end
	switch w.Checkpoint {
	case cpMemory:
		cp, err = checkpoint.New(mem, checkpoint.Config{})
		cpStore = mem
	case cpBolt:
		var st storage.Store
		if st, err = bolt.Open(filepath.Join(dir, "crawl.db")); err != nil {
			break
		}
		defer st.Close() // after cp.Close
		cp, err = checkpoint.New(st, checkpoint.Config{})
		cpStore = st
	}
	if err != nil {
		ro.refused, ro.openErr = true, err
		return ro
	}
	b, err := breaker.New(bcfg)
	if err != nil {
		ro.openErr = fmt.Errorf("breaker: %w", err)
		if cp != nil {
			cp.Close()
		}
		return ro
	}
	exts := []bw.Extension{v, b}
	if cp != nil {
		exts = append(exts, cp)
	}
	// One wiring: Use gives the checkpoint the breaker (its saved circuits
	// restored) and registers each in order.
	if err := bw.Use(c, exts...); err != nil {
		ro.openErr = fmt.Errorf("wiring: %w", err)
		if cp != nil {
			cp.Close()
		}
		return ro
	}

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
	// With Clone, product pages go through a clone with callbacks of its
	// own, as Colly's _examples/coursera_courses does; Use is not called
	// on it (the breaker guards it at the shared transport), but it is
	// registered with the checkpoint, as the README says, so that the
	// URLs it leaves unfinished resume on it.
	detail := c
	if w.Clone {
		detail = c.Clone()
		if cp != nil {
			cp.Register(detail)
		}
	}
	var q *queue.Queue
	if w.Queue > 0 {
		if q, err = queue.New(w.Queue, &queue.InMemoryQueueStorage{MaxSize: 1 << 20}); err != nil {
			ro.openErr = fmt.Errorf("queue: %w", err)
			return ro
		}
	}
	var refusedMu sync.Mutex
	// handBack is the user's handling of an error Visit returned for
	// link (the URL the store names it by; visited is what was visited):
	// with MaxRequests the user hands it to the breaker, as its doc says.
	// The harness notes Colly's answer for the invariants.
	handBack := func(link, visited string, err error) {
		if err == nil {
			return
		}
		refusedMu.Lock()
		ro.refusedByColly[link] = err.Error()
		refusedMu.Unlock()
		if w.MaxRequests > 0 {
			b.NotVisited(visited, err)
		}
	}
	// follow visits a link as the scraper does: a product through the
	// clone, else through the queue, else from the page (parent) it is on.
	follow := func(parent *colly.Request, link string, product bool) {
		visited := link
		if product && redir != nil {
			visited = redir.link(link)
		}
		switch {
		case product && w.Clone:
			handBack(link, visited, detail.Visit(visited))
		case q != nil:
			handBack(link, visited, q.AddURL(visited))
		case parent != nil:
			handBack(link, visited, parent.Visit(visited))
		default:
			handBack(link, visited, c.Visit(visited))
		}
	}
	var seen sync.Map // with AllowURLRevisit, the links the scraper followed
	c.OnHTML(testserver.ProductLinkSelector+", "+testserver.NextSelector, func(e *colly.HTMLElement) {
		link := e.Request.AbsoluteURL(e.Attr("href"))
		product := e.DOM.Is(testserver.ProductLinkSelector)
		if w.HasVisited {
			visited := link
			if product && redir != nil {
				visited = redir.link(link)
			}
			if was, err := c.HasVisited(visited); err == nil && was {
				return
			}
		}
		if w.Revisits > 0 {
			if _, dup := seen.LoadOrStore(link, true); dup {
				return
			}
		}
		if w.IdleTTL > 0 && product {
			later.mu.Lock()
			later.urls = append(later.urls, link)
			later.mu.Unlock()
			return
		}
		follow(e.Request, link, product)
	})
	var records atomic.Int64
	title := func(e *colly.HTMLElement) {
		records.Add(1)
		out.add(e.Request.URL.String())
	}
	c.OnHTML(testserver.TitleSelector, title)
	if w.Clone {
		detail.OnHTML(testserver.TitleSelector, title)
	}
	// The URLs the client gave up waiting for by its own Client.Timeout:
	// a page the store served whole may not have reached the client, and
	// a retry fetches it again.
	var timedOutMu sync.Mutex
	timedOut := func(r *colly.Response, err error) {
		if err == nil || !strings.Contains(err.Error(), "Client.Timeout") {
			return
		}
		u := r.Request.URL.String()
		var ue *url.Error
		if errors.As(err, &ue) {
			u = ue.URL // a redirect's hop: the URL that timed out
		}
		timedOutMu.Lock()
		ro.timedOut[u]++
		timedOutMu.Unlock()
	}
	c.OnError(timedOut)
	if w.Clone {
		detail.OnError(timedOut)
	}
	if w.RetryLoop {
		var mu sync.Mutex
		tries := map[string]int{}
		retry := func(r *colly.Response, _ error) {
			u := r.Request.URL.String()
			mu.Lock()
			tries[u]++
			n := tries[u]
			mu.Unlock()
			if n <= 3 {
				handBack(u, u, r.Request.Retry())
			}
		}
		c.OnError(retry)
		if w.Clone {
			detail.OnError(retry)
		}
	}
	// Deliberate revisits: each store's start page, when it lists
	// products, is visited again, Revisits times in a chain. Each revisit
	// carries an id in its context: it must reach OnResponse or OnError.
	var rv struct {
		mu       sync.Mutex
		left     map[string]int
		asked    map[int]string
		answered map[int]bool
		cut      map[int]bool // ended in OnError, not made: the crawl's own end stopped it
		next     int
	}
	if w.Revisits > 0 {
		rv.left, rv.asked, rv.answered, rv.cut = map[string]int{}, map[int]string{}, map[int]bool{}, map[int]bool{}
		for _, s := range sites {
			rv.left[s.url+"/"] = w.Revisits
		}
		c.OnHTML("ul.products", func(e *colly.HTMLElement) {
			u := e.Request.URL.String()
			rv.mu.Lock()
			if rv.left[u] == 0 {
				rv.mu.Unlock()
				return
			}
			rv.left[u]--
			rv.next++
			id := rv.next
			rv.mu.Unlock()
			ctx := colly.NewContext()
			ctx.Put("chaos-revisit", id)
			err := c.Request("GET", u, nil, ctx, nil)
			if err == nil {
				rv.mu.Lock()
				rv.asked[id] = u
				rv.mu.Unlock()
			}
			handBack(u, u, err)
		})
		mark := func(r *colly.Request, err error) {
			if id, ok := r.Ctx.GetAny("chaos-revisit").(int); ok && rv.left != nil {
				// Stopped by the crawl's own end before it was made: the
				// collector's context is over, and the error is that
				// context's or Colly's abort before the request.
				cut := err != nil && c.Context != nil && c.Context.Err() != nil &&
					(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, colly.ErrAbortedBeforeRequest))
				rv.mu.Lock()
				rv.answered[id] = true
				rv.cut[id] = rv.cut[id] || cut
				rv.mu.Unlock()
			}
		}
		c.OnResponse(func(r *colly.Response) { mark(r.Request, nil) })
		c.OnError(func(r *colly.Response, err error) { mark(r.Request, err) })
	}
	// drain waits until every collector and the queue are done.
	drain := func() {
		for {
			if q != nil {
				_ = q.Run(c)
				// Colly's Run may not be called again until the queue is
				// stopped (queue.go: "cannot call duplicate Queue.Run").
				q.Stop()
			}
			c.Wait()
			detail.Wait()
			// An async collector's callbacks may have added to the queue
			// after Run found it empty: run it again.
			if q == nil || q.IsEmpty() {
				return
			}
		}
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
					b.Compact()
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
			follow(nil, s.url+"/", false)
		}
		drain()
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
			follow(nil, u, true)
		}
		drain()
	}()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		ro.hung = true
		// What every goroutine was doing, for a hang's post-mortem (kept
		// with the case's files under -keep).
		if f, err := os.Create(filepath.Join(dir, "goroutines-hung.txt")); err == nil {
			_ = pprof.Lookup("goroutine").WriteTo(f, 2)
			f.Close()
		}
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
	if w.Revisits > 0 {
		rv.mu.Lock()
		ro.revisitsAsked = len(rv.asked)
		for id, u := range rv.asked {
			if !rv.answered[id] {
				ro.revisitsLost = append(ro.revisitsLost, fmt.Sprintf("%s (revisit %d)", u, id))
			}
			if rv.cut[id] {
				ro.revisitsCut = append(ro.revisitsCut, u)
			}
		}
		rv.mu.Unlock()
		sort.Strings(ro.revisitsLost)
	}
	ro.outcome = outcome.Decide(records.Load(), v, b, optJudge(cp))
	ro.exit = ro.outcome.State.ExitCode()
	if ct != nil {
		ro.carried = ct.n.Load()
		ro.carriedPaths = ct.carriedPaths()
	}
	if cp != nil {
		cp.SetOutcome(ro.outcome)
		ro.cpStates, ro.cpErrs = map[string]storage.State{}, map[string]string{}
		for _, u := range promised() {
			rec, ok, err := cpStore.Get(collyx.RequestID(u, nil))
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
