package testserver_test

import (
	"errors"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// get fetches u through proxy p with a client of its own, as a crawler's
// transport does.
func get(t *testing.T, p *testserver.Proxy, u string) (*http.Response, error) {
	t.Helper()
	pu, err := url.Parse(p.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}}
	resp, err := c.Get(u)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

// Each mode does to a request what it says, and only a healthy or slow
// proxy's requests reach the store: the store's own log counts them.
func TestProxyModes(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cases := []struct {
		mode    testserver.ProxyMode
		status  int  // 0: the request fails without an HTTP answer
		reaches bool // the store receives it
	}{
		{testserver.ProxyHealthy, 200, true},
		{testserver.ProxySlow, 200, true},
		{testserver.ProxyRefuse, 0, false},
		{testserver.ProxyAuth, http.StatusProxyAuthRequired, false},
		{testserver.ProxyBadGateway, http.StatusBadGateway, false},
		{testserver.ProxyBlocked, http.StatusForbidden, false},
	}
	for _, tc := range cases {
		t.Run(tc.mode.String(), func(t *testing.T) {
			p, err := testserver.StartProxy(testserver.ProxyConfig{Mode: tc.mode, Delay: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			before := store.Count()
			start := time.Now()
			resp, err := get(t, p, store.URL()+testserver.ProductPath(1))
			took := time.Since(start)
			switch {
			case tc.status == 0 && err == nil:
				t.Fatalf("answered %d, want the connection refused", resp.StatusCode)
			case tc.status == 0 && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE):
				t.Logf("failed with %v (a reset, as the client saw it)", err)
			case tc.status != 0 && err != nil:
				t.Fatalf("failed with %v, want HTTP %d", err, tc.status)
			case tc.status != 0 && resp.StatusCode != tc.status:
				t.Fatalf("answered %d, want %d", resp.StatusCode, tc.status)
			}
			if got := store.Count() - before; (got == 1) != tc.reaches || got > 1 {
				t.Fatalf("the store received %d requests, want reaches=%v", got, tc.reaches)
			}
			if p.Asked() != 1 {
				t.Fatalf("the proxy counts %d requests asked, want 1", p.Asked())
			}
			if tc.mode == testserver.ProxySlow && took < 50*time.Millisecond {
				t.Fatalf("a slow proxy answered in %v, want at least its 50 ms delay", took)
			}
		})
	}
}

// A proxy degrades after its first After requests, and on command; a
// Colly collector crawls through it as through Colly's own proxy setting.
func TestProxyDegradesAfterAndOnCommand(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p, err := testserver.StartProxy(testserver.ProxyConfig{Mode: testserver.ProxyBadGateway, After: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := colly.NewCollector(colly.AllowURLRevisit())
	if err := c.SetProxy(p.URL()); err != nil {
		t.Fatal(err)
	}
	statuses := map[int]int{}
	c.OnResponse(func(r *colly.Response) { statuses[r.StatusCode]++ })
	c.OnError(func(r *colly.Response, _ error) { statuses[r.StatusCode]++ })
	for i := 1; i <= 5; i++ {
		c.Visit(store.URL() + testserver.ProductPath(i))
	}
	if statuses[200] != 3 || statuses[502] != 2 || store.Count() != 3 || p.Forwarded() != 3 {
		t.Fatalf("statuses %v, store received %d, proxy forwarded %d: want 3 pages then 2 × 502, 3 at the store", statuses, store.Count(), p.Forwarded())
	}
	p.SetMode(testserver.ProxyConfig{Mode: testserver.ProxyHealthy})
	c.Visit(store.URL() + testserver.ProductPath(6))
	if statuses[200] != 4 || store.Count() != 4 {
		t.Fatalf("after recovering: statuses %v, store received %d; want a 4th page", statuses, store.Count())
	}
}

// A proxy refuses to forward anywhere but loopback: a test's traffic
// stays on the machine.
func TestProxyForwardsOnlyToLoopback(t *testing.T) {
	p, err := testserver.StartProxy(testserver.ProxyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	resp, err := get(t, p, "http://example.com/")
	if err != nil || resp.StatusCode != http.StatusForbidden || p.Forwarded() != 0 {
		t.Fatalf("got %v, %v, forwarded %d; want 403 and nothing forwarded", resp, err, p.Forwarded())
	}
	if _, err := testserver.StartProxy(testserver.ProxyConfig{Mode: 99}); err == nil {
		t.Fatal("a proxy with mode 99 started, want an error")
	}
}
