package metrics_test

import (
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// A crawl through a pool with a refusing proxy: the scrape names each
// proxy by host:port, the refusing one ejected, and no password anywhere.
func TestScrapeShowsEachProxyWithoutCredentials(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 12})
	fleet, err := testserver.StartProxies([]testserver.ProxyConfig{{User: "crawler", Password: "s3cret"},
		{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyRefuse}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	good, bad := fleet.Proxies[0], fleet.Proxies[1]
	pool, err := proxy.New(proxy.Config{Proxies: []string{
		"http://crawler:s3cret@" + good.Host(), "http://crawler:s3cret@" + bad.Host()}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, metrics.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WatchProxies(pool.Stats); err != nil {
		t.Fatal(err)
	}
	b := newBreaker(t, breaker.Config{Proxies: pool})
	c := colly.NewCollector()
	c.SetProxyFunc(pool.ProxyFunc())
	b.Register(c)
	for n := 1; n <= 12; n++ {
		c.Visit(store.ProductURL(n))
	}

	s := scrape(t, serve(t, reg).URL())
	if got := s.value(t, "breakwater_proxy_state", "proxy", bad.Host(), "state", "open"); got != 1 {
		t.Errorf("refusing proxy open = %v, want 1 (ejected)", got)
	}
	if got := s.value(t, "breakwater_proxy_outcomes_total", "proxy", bad.Host(), "outcome", "connect_failed"); got != 3 {
		t.Errorf("refusing proxy connect_failed = %v, want 3", got)
	}
	if got := s.value(t, "breakwater_proxy_outcomes_total", "proxy", good.Host(), "outcome", "carried"); got != 12 {
		t.Errorf("healthy proxy carried = %v, want the 12 pages", got)
	}
	if got := s.value(t, "breakwater_proxy_ejections_total", "proxy", bad.Host()); got != 1 {
		t.Errorf("ejections = %v, want 1", got)
	}
	for _, fam := range s {
		for _, mt := range fam.GetMetric() {
			for _, l := range mt.GetLabel() {
				if strings.Contains(l.GetValue(), "s3cret") || strings.Contains(l.GetValue(), "crawler") {
					t.Errorf("%s carries a proxy's credentials: %s=%q", fam.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
	if err := m.WatchProxies(pool.Stats); err == nil {
		t.Error("a second pool watched")
	}
}
