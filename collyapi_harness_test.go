package breakwater_test

// The harness of collyapi_test.go: a scraper wired exactly as the README's
// Usage (validate.New with the page rules, breaker.New(breaker.Config{
// Profile: breaker.Standard(), ...}), breakwater.Use(c, v, b), RetryOnError(3), outcome.Decide at the
// end), run against testserver stores on 127.0.0.1 and judged from the
// outside: the store's own hit log, the records written, the exit code.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// collyDeadline bounds every crawl: a Wait that has not returned by then is
// a hang, and fails the test instead of blocking it.
const collyDeadline = 20 * time.Second

// collyNeed is the failures that trip Standard(): the "need" of the bound
// need + P − 1.
func collyNeed() int {
	p := breaker.Standard()
	return p.Settings().FailuresToTrip()
}

// follow says how the user's scraper follows the links it finds.
type follow int

const (
	followRequest   follow = iota // e.Request.Visit, as the Usage does
	followCollector               // c.Visit from the callback: a fresh context, depth 1
	followNone                    // the scraper visits what it was given, nothing more
)

// usageOpts is what a test changes in the Usage wiring.
type usageOpts struct {
	retry  bool   // c.OnError(breaker.RetryOnError(3)), as the Usage
	follow follow // how links are followed
	// checkpoint, when set, is wired as its doc says, Use(c, v, b, cp),
	// and judged at the end.
	checkpoint *checkpoint.Checkpoint
}

// usageCrawl is one scraper wired as the README's Usage.
type usageCrawl struct {
	t  *testing.T
	c  *colly.Collector
	v  *validate.Validator
	b  *breaker.Breaker
	cp *checkpoint.Checkpoint

	mu      sync.Mutex
	records map[string]int // URL → records written for it
	n       int64
	elapsed time.Duration
}

// wireUsage adds Breakwater to c as the README's Usage does, with its
// record-writing and link-following callbacks. Whatever the test set on c
// before is the user's own configuration, set before the one line.
func wireUsage(t *testing.T, c *colly.Collector, o usageOpts) *usageCrawl {
	t.Helper()
	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.MinBytes(0), validate.Require("ul.products")},
		Pages: []validate.Page{
			{Pattern: `/products/`, Checks: []validate.Check{validate.MinBytes(1024), validate.Require("div.product h1.title")}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Validator: v, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	k := &usageCrawl{t: t, c: c, v: v, b: b, cp: o.checkpoint, records: map[string]int{}}
	if o.checkpoint != nil {
		if err := breakwater.Use(c, v, b, o.checkpoint); err != nil {
			t.Fatal(err)
		}
	} else {
		breakwater.Use(c, v, b)
	}
	c.OnHTML("div.product", func(e *colly.HTMLElement) {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.records[e.Request.URL.String()]++
		k.n++
	})
	switch o.follow {
	case followRequest:
		c.OnHTML("a.product-link, a.next", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	case followCollector:
		c.OnHTML("a.product-link, a.next", func(e *colly.HTMLElement) { c.Visit(e.Request.AbsoluteURL(e.Attr("href"))) })
	}
	if o.retry {
		c.OnError(breaker.RetryOnError(3))
	}
	return k
}

// run runs visit then Wait on a goroutine, fails the test if Wait has not
// returned within collyDeadline, and decides the ending as the Usage does.
func (k *usageCrawl) run(visit func()) outcome.Outcome {
	k.t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		visit()
		k.c.Wait()
	}()
	select {
	case <-done:
	case <-time.After(collyDeadline):
		k.t.Fatalf("Wait() did not return within %v", collyDeadline)
	}
	k.elapsed = time.Since(start)
	return k.decide()
}

func (k *usageCrawl) decide() outcome.Outcome {
	k.mu.Lock()
	n := k.n
	k.mu.Unlock()
	if k.cp != nil {
		o := outcome.Decide(n, k.v, k.b, k.cp)
		k.cp.SetOutcome(o)
		if err := k.cp.Close(); err != nil {
			k.t.Errorf("checkpoint Close: %v", err)
		}
		return o
	}
	return outcome.Decide(n, k.v, k.b)
}

func (k *usageCrawl) recordsFor(u string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.records[u]
}

func (k *usageCrawl) total() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n
}

// unfinished is the set of URLs the breaker lists unfinished.
func (k *usageCrawl) unfinished() map[string]bool {
	set := map[string]bool{}
	for _, u := range k.b.Unfinished().URLs {
		set[u.URL] = true
	}
	return set
}

func startStore(t *testing.T, cfg testserver.Config) *testserver.Store {
	t.Helper()
	s, err := testserver.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// healthyStore and degradingStore are the two stores most rows run against.
func healthyStore(t *testing.T) *testserver.Store {
	return startStore(t, testserver.Config{Products: 30, PerPage: 10})
}

func degradingStore(t *testing.T) *testserver.Store {
	return startStore(t, testserver.Config{Products: 150, PerPage: 10,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}})
}

// wantEnding: promise (e), the ending is true.
func wantEnding(t *testing.T, o outcome.Outcome, want outcome.State) {
	t.Helper()
	if o.State != want || o.State.ExitCode() != want.ExitCode() {
		t.Errorf("ending %s (exit %d, reason %q), want %s (exit %d)", o.State, o.State.ExitCode(), o.Reason, want, want.ExitCode())
	}
}

// wantBound: promise (a), at most need + P − 1 requests reach the store
// from its first failure on, counted in its own log.
func wantBound(t *testing.T, s *testserver.Store, p int) {
	t.Helper()
	if _, seq := s.FailingSince(); seq == 0 {
		t.Fatalf("the store never started failing (%d requests): the bound was not exercised", s.Count())
	}
	need := collyNeed()
	if got := s.SentAfterFailing(); got > need+p-1 {
		t.Errorf("%d requests reached the store after it started failing, want at most need + P − 1 = %d + %d − 1 = %d", got, need, p, need+p-1)
	}
}

// wantNoDoubles: promise (d), no path answered 200 by a healthy store more
// often than the user asked for it (asked: path → times; absent means once).
func wantNoDoubles(t *testing.T, hits []testserver.Hit, asked map[string]int) {
	t.Helper()
	ok := map[string]int{}
	for _, h := range hits {
		if h.Status == http.StatusOK && h.Mode == testserver.Healthy {
			ok[h.Path]++
		}
	}
	var twice []string
	for p, n := range ok {
		want := 1
		if a, found := asked[p]; found {
			want = a
		}
		if n > want {
			twice = append(twice, fmt.Sprintf("%s ×%d (asked %d)", p, n, want))
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Errorf("fetched more often than asked: %v", twice)
	}
}

// wantNoneLost: promise (c), every URL the store was asked for and not
// collected (a product page with no record, another page never answered
// 200) is listed unfinished, or the ending is not complete. alias maps a
// listed URL to the URL the store saw (a redirect's source to its target).
// A URL the user's own callbacks stopped (chosen) is not work left.
func wantNoneLost(t *testing.T, k *usageCrawl, base string, hits []testserver.Hit, o outcome.Outcome, alias func(string) string, chosen ...string) []string {
	t.Helper()
	listed := map[string]bool{}
	for u := range k.unfinished() {
		if alias != nil {
			u = alias(u)
		}
		listed[u] = true
	}
	answered := map[string]bool{}
	for _, h := range hits {
		if h.Status == http.StatusOK && h.Mode == testserver.Healthy {
			answered[h.Path] = true
		}
	}
	seen := map[string]bool{}
	for _, u := range chosen {
		seen[pathOf(u)] = true
	}
	var lost []string
	for _, h := range hits {
		if seen[h.Path] || h.Path == "/robots.txt" {
			continue
		}
		seen[h.Path] = true
		u := base + h.Path
		collected := answered[h.Path]
		if strings.HasPrefix(h.Path, "/products/") {
			collected = k.recordsFor(u) > 0
		}
		if !collected && !listed[u] {
			lost = append(lost, u)
		}
	}
	sort.Strings(lost)
	if len(lost) > 0 && o.State == outcome.Complete {
		t.Errorf("ended complete with %d URLs asked of the store, not collected and not listed unfinished: %v", len(lost), head(lost, 5))
	}
	return lost
}

func head(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// wantAllProducts checks a healthy crawl collected each of the products it
// was meant to, once.
func wantProducts(t *testing.T, k *usageCrawl, urls []string) {
	t.Helper()
	var missing, twice []string
	for _, u := range urls {
		switch n := k.recordsFor(u); {
		case n == 0:
			missing = append(missing, u)
		case n > 1:
			twice = append(twice, u)
		}
	}
	if len(missing) > 0 || len(twice) > 0 || k.total() != int64(len(urls)) {
		t.Errorf("%d records for %d products: missing %v, written twice %v", k.total(), len(urls), head(missing, 5), head(twice, 5))
	}
}

func productURLs(base string, ns ...int) []string {
	urls := make([]string, len(ns))
	for i, n := range ns {
		urls[i] = base + testserver.ProductPath(n)
	}
	return urls
}

func upTo(n int) []int {
	ns := make([]int, n)
	for i := range ns {
		ns[i] = i + 1
	}
	return ns
}

// front is a server of the test's in front of a store: it answers what
// handle answers and passes everything else to the store, which logs it.
// It runs on 127.0.0.1, so it is a host of its own.
func front(t *testing.T, s *testserver.Store, handle func(w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if handle != nil && handle(w, r) {
			return
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// forwardProxy is a loopback HTTP forward proxy that counts what it carried.
type forwardProxy struct {
	srv *httptest.Server
	n   atomic.Int64
}

func startProxy(t *testing.T) *forwardProxy {
	t.Helper()
	p := &forwardProxy{}
	out := &http.Transport{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.n.Add(1)
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		req := r.Clone(r.Context())
		req.RequestURI = ""
		resp, err := out.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(func() { p.srv.Close(); out.CloseIdleConnections() })
	return p
}

// countingRT is the user's own transport: it counts what it carried.
type countingRT struct {
	n    atomic.Int64
	base http.RoundTripper
}

func (c *countingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Path
}

// feature is a Colly setting exercised by the Usage's own crawl: from the
// store's first listing page, following product and next links.
type feature struct {
	name  string
	async bool
	// p is the most requests the wiring lets one domain have in flight:
	// its LimitRule's parallelism; 0 means need for an async collector
	// with no rule (the breaker's own cap), 1 for a synchronous one.
	p       int
	follow  follow
	noRetry bool
	// setup is the user's configuration, before Use; user their callbacks,
	// after it.
	setup func(t *testing.T, c *colly.Collector, s *testserver.Store)
	user  func(c *colly.Collector)
	// want is the products a healthy crawl must collect; nil means all.
	// chosen is those the user's callbacks stop on purpose: not work left.
	want   func(cat testserver.Catalog) []int
	chosen func(cat testserver.Catalog) []int
	// stores replaces the healthy and degrading stores' configurations.
	stores func(degrade bool) testserver.Config
}

func (f feature) parallelism() int {
	switch {
	case f.p > 0:
		return f.p
	case !f.async:
		return 1
	}
	return collyNeed()
}

// crawlFeature runs f against a healthy store (ending complete, every
// wanted product once) and a store that degrades after 30 pages (ending
// tripped, the bound), checking the five promises in each.
func crawlFeature(t *testing.T, f feature) {
	store := func(t *testing.T, degrade bool) *testserver.Store {
		switch {
		case f.stores != nil:
			return startStore(t, f.stores(degrade))
		case degrade:
			return degradingStore(t)
		}
		return healthyStore(t)
	}
	t.Run("healthy", func(t *testing.T) {
		s := store(t, false)
		k, o := f.crawl(t, s)
		wantEnding(t, o, outcome.Complete)
		want := upTo(s.Catalog().Len())
		if f.want != nil {
			want = f.want(s.Catalog())
		}
		wantProducts(t, k, productURLs(s.URL(), want...))
		hits := s.Requests()
		wantNoDoubles(t, hits, nil)
		wantNoneLost(t, k, s.URL(), hits, o, nil, f.chosenURLs(s)...)
	})
	t.Run("degrading", func(t *testing.T) {
		s := store(t, true)
		k, o := f.crawl(t, s)
		wantEnding(t, o, outcome.Tripped)
		wantBound(t, s, f.parallelism())
		hits := s.Requests()
		wantNoDoubles(t, hits, nil)
		wantNoneLost(t, k, s.URL(), hits, o, nil, f.chosenURLs(s)...)
	})
}

func (f feature) chosenURLs(s *testserver.Store) []string {
	if f.chosen == nil {
		return nil
	}
	return productURLs(s.URL(), f.chosen(s.Catalog())...)
}

func (f feature) crawl(t *testing.T, s *testserver.Store) (*usageCrawl, outcome.Outcome) {
	t.Helper()
	c := colly.NewCollector(colly.Async(f.async))
	if f.setup != nil {
		f.setup(t, c, s)
	}
	k := wireUsage(t, c, usageOpts{retry: !f.noRetry, follow: f.follow})
	if f.user != nil {
		f.user(c)
	}
	o := k.run(func() { c.Visit(s.URL() + "/") })
	return k, o
}
