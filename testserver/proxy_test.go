package testserver

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/proxy"
)

// Through a healthy proxy a colly crawl of a store's catalogue reaches the
// store with every request once, and the proxy logs each of them as
// forwarded, with the store's own status.
func TestProxyHealthyForwardsEveryRequestOnce(t *testing.T) {
	s := start(t, Config{Products: 12, PerPage: 5})
	p := startProxy(t, ProxyConfig{})
	var out collyOutcome
	c := collector(&out)
	if err := c.SetProxy(p.URL()); err != nil {
		t.Fatal(err)
	}
	c.OnHTML("a.product-link, a.next", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	c.AllowURLRevisit = false
	if err := c.Visit(s.URL() + "/"); err != nil {
		t.Fatal(err)
	}
	// 3 listing pages and 12 products.
	if got := out.statuses[200]; got != 15 || len(out.errs) != 0 {
		t.Fatalf("statuses %v, errors %v; want 15 × 200", out.statuses, out.errs)
	}
	if s.Count() != 15 || p.Count() != 15 || p.Forwarded() != 15 || p.CountMode(ProxyHealthy) != 15 || p.CountHost(s.Host()) != 15 {
		t.Fatalf("store received %d, proxy logged %d, forwarded %d, healthy %d, for the store %d; want 15 each",
			s.Count(), p.Count(), p.Forwarded(), p.CountMode(ProxyHealthy), p.CountHost(s.Host()))
	}
	for n := 1; n <= 12; n++ {
		if got := s.CountPath(ProductPath(n)); got != 1 {
			t.Errorf("product %d reached the store %d times, want once", n, got)
		}
	}
	for _, h := range p.Requests() {
		if h.Host != s.Host() || h.Status != 200 || !h.Forwarded || h.Mode != ProxyHealthy {
			t.Errorf("proxy hit %+v; want forwarded to %s, 200", h, s.Host())
		}
	}
}

// A proxy that answers for itself (407, 502, 403 block page) never
// contacts the store: the client sees the proxy's status, the store
// receives nothing, the proxy logs every request with what it did.
func TestProxyAnswersForItselfWithoutContactingTheTarget(t *testing.T) {
	cases := []struct {
		mode   ProxyMode
		status int
		body   []byte // nil: not checked
	}{
		{ProxyAuth407, http.StatusProxyAuthRequired, nil},
		{ProxyBadGateway, http.StatusBadGateway, nil},
		{ProxyBlock403, http.StatusForbidden, BlockPage()},
	}
	for _, tc := range cases {
		t.Run(tc.mode.String(), func(t *testing.T) {
			stores := []*Store{start(t, Config{Products: 5}), start(t, Config{Products: 5})}
			p := startProxy(t, ProxyConfig{Scenario: ProxyScenario{Mode: tc.mode}})
			var out collyOutcome
			c := collector(&out)
			if err := c.SetProxy(p.URL()); err != nil {
				t.Fatal(err)
			}
			var bodies [][]byte
			c.OnError(func(r *colly.Response, _ error) { bodies = append(bodies, r.Body) })
			for _, s := range stores {
				for n := 1; n <= 3; n++ {
					_ = c.Visit(s.ProductURL(n))
				}
			}
			if out.statuses[tc.status] != 6 || len(out.errs) != 0 {
				t.Fatalf("statuses %v, errors %v; want 6 × %d", out.statuses, out.errs, tc.status)
			}
			for i, s := range stores {
				if s.Count() != 0 {
					t.Errorf("store %d received %d requests through a %s proxy, want 0", i, s.Count(), tc.mode)
				}
				if p.CountHost(s.Host()) != 3 {
					t.Errorf("proxy logged %d requests for store %d, want 3", p.CountHost(s.Host()), i)
				}
			}
			if p.Count() != 6 || p.CountMode(tc.mode) != 6 || p.Forwarded() != 0 {
				t.Fatalf("proxy logged %d, %d by %s, forwarded %d; want 6, 6, 0", p.Count(), p.CountMode(tc.mode), tc.mode, p.Forwarded())
			}
			for _, h := range p.Requests() {
				if h.Status != tc.status || h.Forwarded {
					t.Errorf("proxy hit %+v, want status %d, not forwarded", h, tc.status)
				}
			}
			if tc.body != nil {
				for _, b := range bodies {
					if !bytes.Equal(b, tc.body) {
						t.Errorf("body %q, want the block page", b)
					}
				}
			}
		})
	}
}

// A 407 carries the challenge a client needs to tell it from a site's 4xx.
func TestProxyAuth407Challenges(t *testing.T) {
	s := start(t, Config{Products: 2})
	p := startProxy(t, ProxyConfig{Scenario: ProxyScenario{Mode: ProxyAuth407}})
	req, _ := http.NewRequest(http.MethodGet, s.ProductURL(1), nil)
	resp, err := viaProxy(t, p.URL()).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusProxyAuthRequired || !strings.HasPrefix(resp.Header.Get("Proxy-Authenticate"), "Basic ") {
		t.Fatalf("answered %d with Proxy-Authenticate %q; want 407 with a Basic challenge", resp.StatusCode, resp.Header.Get("Proxy-Authenticate"))
	}
}

// A refusing proxy is not listening: the client's dial fails with
// "connection refused", the proxy logs nothing, the store receives
// nothing; healed, the proxy listens again on the same URL.
func TestProxyRefuseRefusesConnections(t *testing.T) {
	s := start(t, Config{Products: 3})
	p := startProxy(t, ProxyConfig{Scenario: ProxyScenario{Mode: ProxyRefuse}})
	var out collyOutcome
	c := collector(&out)
	if err := c.SetProxy(p.URL()); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 3; n++ {
		_ = c.Visit(s.ProductURL(n))
	}
	if len(out.errs) != 3 || len(out.statuses) != 0 {
		t.Fatalf("statuses %v, errors %v; want 3 errors and no answer", out.statuses, out.errs)
	}
	for _, err := range out.errs {
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("error %v, want connection refused", err)
		}
	}
	if p.Count() != 0 || s.Count() != 0 {
		t.Fatalf("proxy logged %d, store received %d; want 0 and 0", p.Count(), s.Count())
	}

	url := p.URL()
	if err := p.SetMode(ProxyHealthy); err != nil {
		t.Fatal(err)
	}
	if p.URL() != url {
		t.Fatalf("healed proxy moved from %s to %s", url, p.URL())
	}
	_ = c.Visit(s.ProductURL(1))
	if out.statuses[200] != 1 || s.Count() != 1 || p.Count() != 1 {
		t.Fatalf("healed: statuses %v, store %d, proxy %d; want one page through", out.statuses, s.Count(), p.Count())
	}
}

// While a proxy refuses, its port stays its own: a server started
// meanwhile cannot listen on it (chaos seed 235215060715102982 drew a
// proxy given a refusing proxy's port, and the pool refused the repeat).
func TestProxyRefusingKeepsItsPort(t *testing.T) {
	p := startProxy(t, ProxyConfig{Scenario: ProxyScenario{Mode: ProxyRefuse}})
	if ln, err := net.Listen("tcp", p.Host()); err == nil {
		ln.Close()
		t.Fatalf("a listener took the refusing proxy's port %s", p.Host())
	}
	if c, err := net.Dial("tcp", p.Host()); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dialling the refusing proxy: %v, want connection refused", err)
	}
	if err := p.SetMode(ProxyHealthy); err != nil {
		t.Fatalf("listening again: %v", err)
	}
}

// A proxy that refuses after N requests forwards N, then refuses even a
// client that holds a kept-alive connection to it: the connection is
// closed and the client's next dial refused.
func TestProxyRefuseAfterNClosesKeptAliveConnections(t *testing.T) {
	s := start(t, Config{Products: 10})
	p := startProxy(t, ProxyConfig{Scenario: ProxyScenario{Mode: ProxyRefuse, After: 3}})
	var out collyOutcome
	c := collector(&out) // colly keeps connections alive
	if err := c.SetProxy(p.URL()); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 6; n++ {
		_ = c.Visit(s.ProductURL(n))
	}
	if out.statuses[200] != 3 || len(out.errs) != 3 {
		t.Fatalf("statuses %v, errors %v; want 3 pages, then 3 errors", out.statuses, out.errs)
	}
	for _, err := range out.errs {
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("error %v, want connection refused", err)
		}
	}
	if s.Count() != 3 || p.Count() != 3 || p.Forwarded() != 3 {
		t.Fatalf("store received %d, proxy logged %d, forwarded %d; want 3 each", s.Count(), p.Count(), p.Forwarded())
	}
}

// A proxy degrades after its first After requests and heals on command.
func TestProxyDegradesAfterAndOnCommand(t *testing.T) {
	s := start(t, Config{Products: 10})
	p := startProxy(t, ProxyConfig{Scenario: ProxyScenario{Mode: ProxyBadGateway, After: 3}})
	var out collyOutcome
	c := collector(&out)
	if err := c.SetProxy(p.URL()); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 5; n++ {
		_ = c.Visit(s.ProductURL(n))
	}
	if out.statuses[200] != 3 || out.statuses[502] != 2 || s.Count() != 3 || p.Forwarded() != 3 {
		t.Fatalf("statuses %v, store received %d, proxy forwarded %d: want 3 pages then 2 × 502, 3 at the store",
			out.statuses, s.Count(), p.Forwarded())
	}
	if err := p.SetMode(ProxyHealthy); err != nil {
		t.Fatal(err)
	}
	_ = c.Visit(s.ProductURL(6))
	if out.statuses[200] != 4 || s.Count() != 4 {
		t.Fatalf("after healing: statuses %v, store received %d; want a 4th page", out.statuses, s.Count())
	}
	if err := p.Reset(); err != nil || p.Count() != 0 {
		t.Fatalf("Reset: %v, count %d; want the log cleared", err, p.Count())
	}
}

// A slow proxy forwards every request after its delay: the store receives
// it, the proxy's log shows the latency it added, and the store's hit
// comes at least that long after the proxy's.
func TestProxyLatencyDelaysThenForwards(t *testing.T) {
	const delay = 30 * time.Millisecond
	s := start(t, Config{Products: 3})
	p := startProxy(t, ProxyConfig{Scenario: ProxyScenario{Mode: ProxyLatency, Delay: delay}})
	var out collyOutcome
	c := collector(&out)
	if err := c.SetProxy(p.URL()); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 3; n++ {
		_ = c.Visit(s.ProductURL(n))
	}
	if out.statuses[200] != 3 || s.Count() != 3 || p.CountMode(ProxyLatency) != 3 || p.Forwarded() != 3 {
		t.Fatalf("statuses %v, store %d, proxy latency %d, forwarded %d; want 3 each", out.statuses, s.Count(),
			p.CountMode(ProxyLatency), p.Forwarded())
	}
	ph, sh := p.Requests(), s.Requests()
	for i := range ph {
		if ph[i].Latency != delay || ph[i].Status != 200 {
			t.Errorf("proxy hit %+v, want latency %v and 200", ph[i], delay)
		}
		if gap := sh[i].Time.Sub(ph[i].Time); gap < delay {
			t.Errorf("request %d reached the store %v after the proxy, want at least %v", i+1, gap, delay)
		}
	}
}

// A latency wait ends when the client gives up, and the request is then
// never forwarded.
func TestProxyLatencyEndsWhenClientCancels(t *testing.T) {
	s := start(t, Config{Products: 3})
	p := startProxy(t, ProxyConfig{Scenario: ProxyScenario{Mode: ProxyLatency, Delay: time.Hour}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := getVia(ctx, viaProxy(t, p.URL()), s.ProductURL(1))
		done <- err
	}()
	waitProxyCount(t, p, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("client got %v, want its own cancellation", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Count() != 0 || p.Forwarded() != 0 {
		t.Fatalf("store received %d, proxy forwarded %d; want nothing forwarded", s.Count(), p.Forwarded())
	}
}

// Close ends a latency wait under way, and leaves no goroutine of the
// proxy behind.
func TestProxyCloseEndsWaitsAndLeavesNoGoroutine(t *testing.T) {
	s := start(t, Config{Products: 3})
	p, err := StartProxy(ProxyConfig{Scenario: ProxyScenario{Mode: ProxyLatency, Delay: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := getVia(context.Background(), viaProxy(t, p.URL()), s.ProductURL(1))
		done <- err
	}()
	waitProxyCount(t, p, 1)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("the request through a closed proxy succeeded, want an error")
	}
	if s.Count() != 0 {
		t.Fatalf("store received %d, want 0", s.Count())
	}
	// A handler's goroutine may still be returning from its last deferred
	// call when Close returns: wait (bounded) for it to be gone.
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "testserver.(*Proxy)") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a goroutine of the proxy outlived Close:\n%s", stacks)
		}
	}
	if err := p.SetMode(ProxyHealthy); !errors.Is(err, ErrProxyClosed) {
		t.Fatalf("SetMode after Close = %v, want ErrProxyClosed", err)
	}
}

// With credentials set the proxy requires them, answers 407 without, and
// never passes them on to the target.
func TestProxyCredentialsRequiredAndNotForwarded(t *testing.T) {
	var got []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Proxy-Authorization"))
	}))
	defer target.Close()
	p := startProxy(t, ProxyConfig{User: "crawler", Password: "s3cret"})

	status, _, err := getVia(context.Background(), viaProxy(t, p.URL()), target.URL+"/a")
	if err != nil || status != http.StatusProxyAuthRequired {
		t.Fatalf("without credentials: %d, %v; want 407", status, err)
	}
	withCreds := strings.Replace(p.URL(), "http://", "http://crawler:s3cret@", 1)
	status, _, err = getVia(context.Background(), viaProxy(t, withCreds), target.URL+"/b")
	if err != nil || status != http.StatusOK {
		t.Fatalf("with credentials: %d, %v; want 200", status, err)
	}
	if len(got) != 1 || got[0] != "" {
		t.Fatalf("the target saw %q as Proxy-Authorization, want one request without it", got)
	}
	if p.CountMode(ProxyAuth407) != 1 || p.Forwarded() != 1 {
		t.Fatalf("proxy logged %d × 407, forwarded %d; want 1 and 1", p.CountMode(ProxyAuth407), p.Forwarded())
	}
}

// A proxy forwards only to loopback, and only plain http in absolute form.
func TestProxyForwardsOnlyPlainHTTPToLoopback(t *testing.T) {
	p := startProxy(t, ProxyConfig{})
	status, _, err := getVia(context.Background(), viaProxy(t, p.URL()), "http://example.com/")
	if err != nil || status != http.StatusForbidden || p.Forwarded() != 0 || p.Count() != 1 {
		t.Fatalf("example.com: %d, %v, forwarded %d of %d; want 403, none forwarded", status, err, p.Forwarded(), p.Count())
	}
	resp, err := client.Get(p.URL() + "/products/sku-1") // origin form: not a proxy request
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("origin-form request: %d, want 400", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodConnect, p.URL(), nil)
	req.Host = "127.0.0.1:443"
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotImplemented {
		t.Fatalf("CONNECT: %d, want 501", resp.StatusCode)
	}
}

// A pool of four proxies behind colly's round-robin switcher, one each
// healthy, refusing, blocking and failing: every store request comes
// through the healthy one, and each bad one fails its share its own way.
func TestProxyFleetRoundRobinPoolSomeBad(t *testing.T) {
	fleet, err := StartFleet([]Config{{Products: 8}, {Products: 8}, {Products: 8}})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	pool, err := StartProxies([]ProxyConfig{
		{},
		{Scenario: ProxyScenario{Mode: ProxyRefuse}},
		{Scenario: ProxyScenario{Mode: ProxyBlock403}},
		{Scenario: ProxyScenario{Mode: ProxyBadGateway}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var out collyOutcome
	c := collector(&out)
	rp, err := proxy.RoundRobinProxySwitcher(pool.URLs()...)
	if err != nil {
		t.Fatal(err)
	}
	c.SetProxyFunc(rp)
	for _, s := range fleet.Stores {
		for n := 1; n <= 8; n++ {
			_ = c.Visit(s.ProductURL(n))
		}
	}
	healthy, refuse, block, bad := pool.Proxies[0], pool.Proxies[1], pool.Proxies[2], pool.Proxies[3]
	if refuse.Count() != 0 {
		t.Errorf("the refusing proxy logged %d requests, want 0", refuse.Count())
	}
	if fleet.Count() != healthy.Forwarded() || pool.Forwarded() != healthy.Forwarded() || healthy.Count() == 0 {
		t.Errorf("stores received %d, the healthy proxy forwarded %d, the pool %d; want them equal and > 0",
			fleet.Count(), healthy.Forwarded(), pool.Forwarded())
	}
	if out.statuses[200] != healthy.Count() || out.statuses[403] != block.Count() || out.statuses[502] != bad.Count() {
		t.Errorf("statuses %v; want 200 × %d, 403 × %d, 502 × %d", out.statuses, healthy.Count(), block.Count(), bad.Count())
	}
	if total := healthy.Count() + block.Count() + bad.Count() + len(out.errs); total != 24 {
		t.Errorf("%d outcomes (%v, %d errors), want 24", total, out.statuses, len(out.errs))
	}
	for _, err := range out.errs {
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("error %v, want connection refused", err)
		}
	}
}

// waitProxyCount waits (bounded) until the proxy has logged n requests.
func waitProxyCount(t *testing.T, p *Proxy, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for p.Count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("proxy logged %d requests, want %d", p.Count(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// An async crawl of three stores through a pool, one proxy of which stops
// listening mid-crawl while requests are under way on its kept-alive
// connections: every visit ends once, each store request is one the pool
// forwarded, and the refusing proxy forwarded exactly its first After.
func TestProxyPoolAsyncCrawlWithProxyRefusingMidway(t *testing.T) {
	fleet, err := StartFleet([]Config{{Products: 30}, {Products: 30}, {Products: 30}})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	pool, err := StartProxies([]ProxyConfig{
		{},
		{Scenario: ProxyScenario{Mode: ProxyRefuse, After: 5}},
		{Scenario: ProxyScenario{Mode: ProxyBlock403}},
		{Scenario: ProxyScenario{Mode: ProxyLatency, Delay: 5 * time.Millisecond}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	c := colly.NewCollector(colly.Async(true))
	c.SetRequestTimeout(10 * time.Second)
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
		t.Fatal(err)
	}
	rp, err := proxy.RoundRobinProxySwitcher(pool.URLs()...)
	if err != nil {
		t.Fatal(err)
	}
	c.SetProxyFunc(rp)
	var mu sync.Mutex
	statuses := map[int]int{}
	var errs []error
	c.OnResponse(func(r *colly.Response) { mu.Lock(); statuses[r.StatusCode]++; mu.Unlock() })
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		defer mu.Unlock()
		if r.StatusCode == 0 {
			errs = append(errs, err)
			return
		}
		statuses[r.StatusCode]++
	})
	for _, s := range fleet.Stores {
		for n := 1; n <= 30; n++ {
			_ = c.Visit(s.ProductURL(n))
		}
	}
	c.Wait()
	refuse, block := pool.Proxies[1], pool.Proxies[2]
	if refuse.Forwarded() != 5 || refuse.CountMode(ProxyRefuse) != refuse.Count()-5 {
		t.Errorf("the refusing proxy logged %d, forwarded %d, reset %d; want 5 forwarded, the rest reset",
			refuse.Count(), refuse.Forwarded(), refuse.CountMode(ProxyRefuse))
	}
	if fleet.Count() != pool.Forwarded() || statuses[200] != pool.Forwarded() || statuses[403] != block.Count() {
		t.Errorf("stores received %d, the pool forwarded %d; statuses %v, block pages %d", fleet.Count(), pool.Forwarded(),
			statuses, block.Count())
	}
	if total := statuses[200] + statuses[403] + len(errs); total != 90 || len(statuses) > 2 {
		t.Errorf("statuses %v and %d errors: %d outcomes, want 90 of 200, 403 or an error", statuses, len(errs), total)
	}
	for _, err := range errs {
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
			t.Errorf("error %v, want connection refused or reset", err)
		}
	}
	for _, s := range fleet.Stores {
		for n := 1; n <= 30; n++ {
			if got := s.CountPath(ProductPath(n)); got > 1 {
				t.Errorf("%s product %d reached the store %d times, want at most once", s.Host(), n, got)
			}
		}
	}
	t.Logf("statuses %v, %d errors; proxies logged %d, %d, %d, %d", statuses, len(errs),
		pool.Proxies[0].Count(), refuse.Count(), block.Count(), pool.Proxies[3].Count())
}
