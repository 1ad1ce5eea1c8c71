package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	breakwater "github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/rs/zerolog"
)

// dialCounter counts the connections a transport opens, per address: what
// each proxy was sent, seen from the crawler's side (a refusing proxy logs
// nothing: the kernel refuses it).
type dialCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (d *dialCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.n[addr]++
	d.mu.Unlock()
	return (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, network, addr)
}

func (d *dialCounter) count(addr string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n[addr]
}

// startPool starts local test proxies of cfgs and a Pool over them.
func startPool(t *testing.T, cfgs ...testserver.ProxyConfig) (*testserver.ProxyFleet, *proxy.Pool) {
	t.Helper()
	fleet, err := testserver.StartProxies(cfgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	pool, err := proxy.New(proxy.Config{Proxies: fleet.URLs()})
	if err != nil {
		t.Fatal(err)
	}
	return fleet, pool
}

// proxiedCrawl crawls every product of stores through pool's rotation
// with b, and returns how often each URL came back 200.
func proxiedCrawl(t *testing.T, b *breaker.Breaker, pool *proxy.Pool, dials *dialCounter, stores []*testserver.Store, products int, opts ...colly.CollectorOption) map[string]int {
	t.Helper()
	c := colly.NewCollector(append([]colly.CollectorOption{colly.Async(true)}, opts...)...)
	c.WithTransport(&http.Transport{DialContext: dials.dial})
	c.SetProxyFunc(pool.ProxyFunc()) // before the breaker, as with Colly's switcher
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
		t.Fatal(err)
	}
	b.Register(c)
	var mu sync.Mutex
	got := map[string]int{}
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		got[r.Request.URL.String()]++
		mu.Unlock()
	})
	for n := 1; n <= products; n++ {
		for _, s := range stores {
			c.Visit(s.ProductURL(n))
		}
	}
	c.Wait()
	return got
}

// Four proxies, one refusing connections and one making every site answer
// 403: the two are ejected after at most the proxy circuit's need
// requests each, every page comes back once through the healthy two, no
// store's circuit opens, and the crawl is complete.
func TestBadProxiesAreEjectedAndNoStoreIsCharged(t *testing.T) {
	const products = 100
	var stores []*testserver.Store
	for range 3 {
		stores = append(stores, startStore(t, testserver.Config{Products: products}))
	}
	fleet, pool := startPool(t, testserver.ProxyConfig{},
		testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyRefuse}},
		testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyBlock403}},
		testserver.ProxyConfig{})
	var mu sync.Mutex
	var opened []string
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Proxies: pool, OnTransition: func(tr circuit.Transition) {
		if tr.To != circuit.Closed {
			mu.Lock()
			opened = append(opened, tr.Key)
			mu.Unlock()
		}
	}})
	dials := &dialCounter{n: map[string]int{}}
	got := proxiedCrawl(t, b, pool, dials, stores, products)

	for _, s := range stores {
		for n := 1; n <= products; n++ {
			if k := got[s.ProductURL(n)]; k != 1 {
				t.Errorf("%s came back %d times, want once", s.ProductURL(n), k)
			}
			if k := s.CountPath(testserver.ProductPath(n)); k != 1 {
				t.Errorf("%s%s received %d requests, want 1", s.Host(), testserver.ProductPath(n), k)
			}
		}
	}
	if len(opened) > 0 {
		t.Errorf("store circuits left closed: %v; a bad proxy is not the store's failure", opened)
	}
	// The default proxy circuit: 5 failures of 10 (3 in a row trip it
	// sooner). As with a store's circuit, the requests already out through
	// a proxy when it is ejected, at most P − 1 of proxiedCrawl's 4 in
	// flight, reach it too: a bound of need + P − 1 (the blocking proxy
	// received 6 in a loaded run, its refusals left to tell).
	const need, p = 5, 4
	refusing, blocking := fleet.Proxies[1], fleet.Proxies[2]
	if k := dials.count(refusing.Host()); k == 0 || k > need+p-1 {
		t.Errorf("the refusing proxy was dialled %d times, want 1..need + P − 1 = %d", k, need+p-1)
	}
	if k := blocking.Count(); k == 0 || k > need+p-1 {
		t.Errorf("the blocking proxy received %d requests, want 1..need + P − 1 = %d", k, need+p-1)
	}
	for i, s := range pool.Stats() {
		ejected := s.State != circuit.Closed
		if ejected != (i == 1 || i == 2) {
			t.Errorf("proxy %s: %v %v, want only the refusing and the blocking one ejected", s.Name, s.State, s.Outcomes)
		}
	}
	t.Logf("refusing proxy dialled %d times, blocking proxy sent %d; proxies: %+v", dials.count(refusing.Host()), blocking.Count(), pool.Stats())
	o := outcome.Decide(int64(len(got)), b)
	if o.State != outcome.Complete {
		t.Errorf("ending %s: %s; want complete", o.State, o.Reason)
	}
	var text strings.Builder
	if err := report.New(o, report.Sources{Breaker: b, Proxies: pool}).Write(&text, report.Text); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*testserver.Proxy{refusing, blocking} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(p.Host()) + ` +open +\d+ +1 `).MatchString(text.String()) {
			t.Errorf("the report does not name %s open, ejected once:\n%s", p.Host(), text.String())
		}
	}
	t.Logf("report:\n%s", text.String())
}

// Every proxy failing is the client's side, not the sites': the crawl
// ends in the client-side error with every URL kept unfinished, and no
// store's circuit opens.
func TestEveryProxyFailingEndsClientSideWithEveryURLKept(t *testing.T) {
	const products = 20
	var stores []*testserver.Store
	for range 3 {
		stores = append(stores, startStore(t, testserver.Config{Products: products}))
	}
	refuse := testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyRefuse}}
	auth := testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyAuth407}}
	fleet, pool := startPool(t, refuse, auth, refuse, auth)
	var mu sync.Mutex
	var opened []string
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Proxies: pool, OnTransition: func(tr circuit.Transition) {
		mu.Lock()
		opened = append(opened, tr.Key)
		mu.Unlock()
	}})
	dials := &dialCounter{n: map[string]int{}}
	var sentToFail, refused atomic.Int32
	got := proxiedCrawl(t, b, pool, dials, stores, products, func(c *colly.Collector) {
		c.OnError(func(_ *colly.Response, err error) {
			switch {
			case errors.Is(err, circuit.ErrOpen):
				refused.Add(1)
			case errors.Is(err, proxy.ErrAllEjected):
				sentToFail.Add(1)
			}
		})
	})

	// Once paused, the URLs are refused at once, not sent to fail for want
	// of a proxy: at most the 4 in flight are.
	t.Logf("%d URLs refused at once, %d sent to fail for want of a proxy", refused.Load(), sentToFail.Load())
	if sentToFail.Load() > 4 {
		t.Errorf("%d URLs sent to fail for want of a proxy while the pool paused, want at most the 4 in flight", sentToFail.Load())
	}
	tried := dials.count(fleet.Proxies[0].Host()) + dials.count(fleet.Proxies[2].Host()) +
		fleet.Proxies[1].Count() + fleet.Proxies[3].Count()
	// Each proxy fails its circuit's 3 in a row, then the pool pauses;
	// the 3 other requests in flight may fail once more.
	t.Logf("the proxies were tried %d times for %d URLs", tried, 3*products)
	if bound := 4*3 + 3; tried > bound {
		t.Errorf("the proxies were tried %d times, want at most %d: the pool pauses once the client side is suspect", tried, bound)
	}
	if len(got) != 0 || fleet.Proxies[1].Forwarded()+fleet.Proxies[3].Forwarded() != 0 {
		t.Fatalf("%d pages came back through failing proxies", len(got))
	}
	if len(opened) > 0 {
		t.Errorf("circuits moved: %v; failing proxies are not the stores' failure", opened)
	}
	if u := b.Unfinished(); u.Total != 3*products {
		t.Errorf("%d URLs unfinished, want all %d", u.Total, 3*products)
	}
	o := outcome.Decide(0, b)
	if o.State != outcome.Error || !strings.Contains(o.Reason, "client side") {
		t.Errorf("ending %s: %s; want the client-side error", o.State, o.Reason)
	}
	t.Logf("ending: %s", o.Reason)
}

// A store answering 403 through every proxy refuses the client, not one
// proxy: it is held after BlockedAfter answers, as without proxies, the
// first refusals sent again through other proxies to tell (until three
// of the four, more than the pool may eject, are refused) counting among
// them; the proxies stay in the rotation, and the ending is the blocked
// error.
func TestAStoreRefusingEveryProxyIsHeldBlocked(t *testing.T) {
	for _, async := range []bool{false, true} {
		store := startStore(t, testserver.Config{Products: 60, PerPage: 60, Scenario: testserver.Scenario{Mode: testserver.Blocked, After: 1}})
		fleet, pool := startPool(t, make([]testserver.ProxyConfig, 4)...)
		b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Proxies: pool})
		c := colly.NewCollector(colly.Async(async))
		c.SetProxyFunc(pool.ProxyFunc())
		p := 1
		if async {
			p = 4
		}
		if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: p}); err != nil {
			t.Fatal(err)
		}
		b.Register(c)
		c.OnError(retryEveryError(3))
		c.OnHTML("a.product-link", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
		c.Visit(store.URL() + "/")
		c.Wait()

		into := store.CountMode(testserver.Blocked)
		t.Logf("async %v: the blocked store received %d requests (the proxies %d)", async, into, fleet.Count())
		if bound := 10 + p - 1; into > bound {
			t.Errorf("async %v: the blocked store received %d requests, want at most BlockedAfter + P − 1 = %d", async, into, bound)
		}
		for _, s := range pool.Stats() {
			if s.State != circuit.Closed || s.Outcomes["blocked"] != 0 {
				t.Errorf("async %v: proxy %s: %v %v; a store refusing everyone ejects no proxy", async, s.Name, s.State, s.Outcomes)
			}
		}
		if u := b.Unfinished(); u.Total != 60 {
			t.Errorf("async %v: %d URLs unfinished, want the 60 products", async, u.Total)
		}
		if o := outcome.Decide(0, b); o.State != outcome.Error || !strings.Contains(o.Reason, "blocked: fix the client") {
			t.Errorf("async %v: ending %s (%s), want error: blocked: fix the client", async, o.State, o.Reason)
		}
	}
}

// A request with a body (colly/queue's requests carry one) whose proxy
// fails is sent again through another proxy, its body read anew.
func TestARequestWithABodyGoesAgainThroughAnotherProxy(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 10})
	_, pool := startPool(t, testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyRefuse}}, testserver.ProxyConfig{})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Proxies: pool})
	c := colly.NewCollector()
	c.SetProxyFunc(pool.ProxyFunc())
	b.Register(c)
	got := 0
	c.OnResponse(func(*colly.Response) { got++ })
	q, err := queue.New(1, &queue.InMemoryQueueStorage{MaxSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 10; n++ {
		q.AddURL(store.ProductURL(n))
	}
	if err := q.Run(c); err != nil {
		t.Fatal(err)
	}
	if u := b.Unfinished(); got != 10 || u.Total != 0 {
		t.Errorf("%d of 10 pages came back, %d unfinished (%v); want every page through the healthy proxy", got, u.Total, u.URLs)
	}
}

// With a proxy function of the user's own that asks the pool which
// proxies are ejected, attempts are still charged to the proxy that
// carried them: the bad proxies are ejected, no store's circuit opens,
// and every page comes back once.
func TestAUsersOwnProxyFunctionIsAttributed(t *testing.T) {
	const products = 60
	var stores []*testserver.Store
	for range 3 {
		stores = append(stores, startStore(t, testserver.Config{Products: products}))
	}
	fleet, pool := startPool(t, testserver.ProxyConfig{},
		testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyRefuse}},
		testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyAuth407}},
		testserver.ProxyConfig{})
	var urls []*url.URL
	for _, s := range fleet.URLs() {
		u, _ := url.Parse(s)
		urls = append(urls, u)
	}
	var mu sync.Mutex
	next := 0
	own := func(*http.Request) (*url.URL, error) { // the user's rotation
		mu.Lock()
		defer mu.Unlock()
		for range urls {
			u := urls[next%len(urls)]
			next++
			if !pool.Ejected(u.String()) {
				return u, nil
			}
		}
		return nil, errors.New("every proxy ejected")
	}
	var opened []string
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Proxies: pool, OnTransition: func(tr circuit.Transition) {
		mu.Lock()
		opened = append(opened, tr.Key)
		mu.Unlock()
	}})
	c := colly.NewCollector(colly.Async(true))
	c.SetProxyFunc(own)
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
		t.Fatal(err)
	}
	b.Register(c)
	var got sync.Map
	c.OnResponse(func(r *colly.Response) { got.Store(r.Request.URL.String(), true) })
	for n := 1; n <= products; n++ {
		for _, s := range stores {
			c.Visit(s.ProductURL(n))
		}
	}
	c.Wait()

	for _, s := range stores {
		for n := 1; n <= products; n++ {
			if k := s.CountPath(testserver.ProductPath(n)); k != 1 {
				t.Errorf("%s%s received %d requests, want 1", s.Host(), testserver.ProductPath(n), k)
			}
			if _, ok := got.Load(s.ProductURL(n)); !ok {
				t.Errorf("%s never came back", s.ProductURL(n))
			}
		}
	}
	if len(opened) > 0 {
		t.Errorf("store circuits moved: %v", opened)
	}
	for i, s := range pool.Stats() {
		if ejected := s.State != circuit.Closed; ejected != (i == 1 || i == 2) {
			t.Errorf("proxy %s: %v %v, want only the refusing and the 407 one ejected", s.Name, s.State, s.Outcomes)
		}
	}
}

// A user's rotation shared by concurrent requests can hand one request
// the same refusing proxy on each re-send. The re-sends go through
// proxies not yet tried for it all the same: the user's function is asked
// again when it repeats one (here it gives the refusing proxy on its
// first three calls, and the pool has three proxies).
func TestAUsersOwnProxyFunctionRepeatingAFailedProxyIsAskedAgain(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 1})
	fleet, pool := startPool(t, testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyRefuse}},
		testserver.ProxyConfig{}, testserver.ProxyConfig{})
	var urls []*url.URL
	for _, s := range fleet.URLs() {
		u, _ := url.Parse(s)
		urls = append(urls, u)
	}
	calls := 0
	own := func(*http.Request) (*url.URL, error) { // the refusing one, three times
		calls++
		if calls <= 3 {
			return urls[0], nil
		}
		return urls[calls%len(urls)], nil
	}
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Proxies: pool})
	c := colly.NewCollector()
	c.SetProxyFunc(own)
	b.Register(c)
	came := false
	c.OnResponse(func(*colly.Response) { came = true })
	c.Visit(store.ProductURL(1))
	c.Wait()

	if k := store.CountPath(testserver.ProductPath(1)); k != 1 || !came {
		t.Errorf("the store received %d requests (want 1), the page came back: %v; unfinished %v",
			k, came, b.Unfinished())
	}
}

// A proxy answering a bare 502 to everything, among three healthy ones:
// one 502 cannot tell the proxy's from a site's, so each goes again
// through another proxy, which tells (answered: the proxy is charged),
// until the proxy fails what the others carry (an outlier) and is
// ejected. No page is charged to its store, every page comes back once,
// and no store's circuit opens.
func TestAProxyAnsweringBare502IsTheOutlier(t *testing.T) {
	const products = 100
	var stores []*testserver.Store
	for range 3 {
		stores = append(stores, startStore(t, testserver.Config{Products: products}))
	}
	bad := testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyBadGateway}}
	fleet, pool := startPool(t, testserver.ProxyConfig{}, bad, testserver.ProxyConfig{}, testserver.ProxyConfig{})
	var mu sync.Mutex
	var opened []string
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Proxies: pool, OnTransition: func(tr circuit.Transition) {
		mu.Lock()
		opened = append(opened, tr.Key)
		mu.Unlock()
	}})
	got := proxiedCrawl(t, b, pool, &dialCounter{n: map[string]int{}}, stores, products)
	missed := 0
	for _, s := range stores {
		for n := 1; n <= products; n++ {
			switch k := got[s.ProductURL(n)]; k {
			case 0:
				missed++
			case 1:
			default:
				t.Errorf("%s came back %d times, want once", s.ProductURL(n), k)
			}
		}
	}
	if len(opened) > 0 {
		t.Errorf("store circuits moved: %v", opened)
	}
	s := pool.Stats()[1]
	t.Logf("the 502 proxy: %v %v, %d requests; pages charged to the stores: %d", s.State, s.Outcomes, fleet.Proxies[1].Count(), missed)
	if s.State == circuit.Closed || s.Outcomes["outlier"] == 0 {
		t.Errorf("the 502 proxy: %v %v, want ejected as the outlier", s.State, s.Outcomes)
	}
	if missed > 0 {
		t.Errorf("%d pages failed with the 502 proxy's answers, want none", missed)
	}
}

// Proxies are named by host:port wherever Breakwater names them: a crawl
// through proxies whose URLs carry credentials, one of them refusing,
// leaves the password in no log line, report (text or JSON) or checkpoint
// record.
func TestProxyCredentialsAppearNowhere(t *testing.T) {
	const secret = "pa55-w0rd"
	store := startStore(t, testserver.Config{Products: 20})
	fleet, err := testserver.StartProxies([]testserver.ProxyConfig{{User: "crawler", Password: secret},
		{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyRefuse}},
		{User: "crawler", Password: secret, Scenario: testserver.ProxyScenario{Mode: testserver.ProxyBadGateway}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	var list []string
	for _, p := range fleet.Proxies {
		list = append(list, "http://crawler:"+secret+"@"+p.Host())
	}
	var logs strings.Builder
	var mu sync.Mutex
	log := zerolog.New(zerolog.SyncWriter(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}))).Level(zerolog.DebugLevel)
	pool, err := proxy.New(proxy.Config{Proxies: list, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Proxies: pool, Logger: log})
	st := memory.New()
	cp, err := checkpoint.New(st, checkpoint.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector()
	c.SetProxyFunc(pool.ProxyFunc())
	if err := breakwater.Use(c, b, cp); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 20; n++ {
		c.Visit(store.ProductURL(n))
	}
	c.Wait()
	o := outcome.Decide(0, b, cp)
	var text, js strings.Builder
	r := report.New(o, report.Sources{Breaker: b, Proxies: pool})
	if err := r.Write(&text, report.Text); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(&js, report.JSON); err != nil {
		t.Fatal(err)
	}
	var records strings.Builder
	if err := st.Scan(func(rec storage.Record) error { fmt.Fprintf(&records, "%+v\n", rec); return nil }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), fleet.Proxies[1].Host()) || !strings.Contains(logs.String(), fleet.Proxies[1].Host()) {
		t.Fatalf("the report or the logs name no proxy:\n%s\n%s", text.String(), logs.String())
	}
	for what, s := range map[string]string{"logs": logs.String(), "text report": text.String(), "JSON report": js.String(), "checkpoint": records.String()} {
		if strings.Contains(s, secret) {
			t.Errorf("the proxies' password is in the %s:\n%s", what, s)
		}
	}
	cp.Close()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A store failing (503, after 10 pages) through a pool of healthy proxies is the store's
// failure: at most one failure goes again through another proxy, to tell,
// so it receives at most need + P − 1 + 1 requests before its circuit
// opens, and no proxy is charged.
func TestAFailingStoreThroughAPoolKeepsTheTripBound(t *testing.T) {
	const p = 4
	store := startStore(t, testserver.Config{Products: 80, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 10}})
	_, pool := startPool(t, make([]testserver.ProxyConfig, 4)...)
	b, into, need := crawlFailingStore(t, store, pool, p, breaker.RetryOnError(3))
	if bound := need + p - 1 + 1; into > bound {
		t.Errorf("the failing store received %d requests, want at most need + P − 1 + 1 = %d", into, bound)
	}
	if st := b.State(store.Host()); st != circuit.Open {
		t.Errorf("the failing store's circuit is %v, want open", st)
	}
	for _, s := range pool.Stats() {
		if s.State != circuit.Closed || s.Outcomes["outlier"] != 0 {
			t.Errorf("proxy %s: %v %v; a failing store charges no proxy", s.Name, s.State, s.Outcomes)
		}
	}
}

// A store failing (503) from the start through a pool of one healthy proxy among a
// refusing one and one making every site answer 403: a request whose 503
// through the healthy proxy is left to tell, and which then fails through
// the bad ones, is the store's failure, not a request no proxy carried
// (chaos seed 15555557528312688129: 20 requests into the failing store,
// bound 15). Its circuit opens within need + P − 1 + the proxies − 1
// requests.
func TestAFailingStoreThroughHealthyAndBadProxiesKeepsTheTripBound(t *testing.T) {
	const p = 4
	store := startStore(t, testserver.Config{Products: 80, Scenario: testserver.Scenario{Mode: testserver.Degrade}})
	_, pool := startPool(t, testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyRefuse}},
		testserver.ProxyConfig{}, testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyBlock403}})
	b, into, need := crawlFailingStore(t, store, pool, p, retryEveryError(3))
	if bound := need + p - 1 + 2; into > bound {
		t.Errorf("the failing store received %d requests, want at most need + P − 1 + 2 = %d", into, bound)
	}
	if st := b.State(store.Host()); st != circuit.Open {
		t.Errorf("the failing store's circuit is %v, want open", st)
	}
}

// The same through a pool of one healthy proxy among two refusing ones
// and one answering 403 itself: once the bad ones are ejected, a 503
// left to tell went back out through the healthy proxy, the only one
// admitting, up to once per proxy of the pool, and each of those re-sends
// reached the failing store uncounted (chaos seed 1902157672349473202: 19
// requests into the failing store, bound 15).
func TestAFailingStoreThroughAPoolWithItsBadProxiesEjectedKeepsTheTripBound(t *testing.T) {
	const p = 3
	store := startStore(t, testserver.Config{Products: 80, Scenario: testserver.Scenario{Mode: testserver.Degrade}})
	refuse := testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyRefuse}}
	_, pool := startPool(t, testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyBlock403}},
		refuse, refuse, testserver.ProxyConfig{})
	b, into, need := crawlFailingStore(t, store, pool, p, retryEveryError(3))
	if bound := need + p - 1 + 3; into > bound {
		t.Errorf("the failing store received %d requests, want at most need + P − 1 + 3 = %d", into, bound)
	}
	if st := b.State(store.Host()); st != circuit.Open {
		t.Errorf("the failing store's circuit is %v, want open", st)
	}
}

// crawlFailingStore crawls store's 80 products through pool's rotation,
// p in parallel, with the user's retry loop onErr, and returns the
// breaker, how many requests the store received while failing, and the
// profile's need.
func crawlFailingStore(t *testing.T, store *testserver.Store, pool *proxy.Pool, p int, onErr colly.ErrorCallback) (*breaker.Breaker, int, int) {
	t.Helper()
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Proxies: pool})
	c := colly.NewCollector(colly.Async(true))
	c.SetProxyFunc(pool.ProxyFunc())
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: p}); err != nil {
		t.Fatal(err)
	}
	b.Register(c)
	c.OnError(onErr)
	for n := 1; n <= 80; n++ {
		c.Visit(store.ProductURL(n))
	}
	c.Wait()
	into := 0
	for _, h := range store.Requests() {
		if h.Failing() {
			into++
		}
	}
	need := breaker.Standard().Settings().FailuresToTrip()
	t.Logf("the failing store received %d requests (need %d, P %d)", into, need, p)
	return b, into, need
}
