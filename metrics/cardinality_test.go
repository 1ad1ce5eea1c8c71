package metrics_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/prometheus/client_golang/prometheus"
)

// TestSeriesAreBoundedAndUnhealthyDomainsKeepTheirs scrapes a crawl over
// 1,000 domains with a limit of 10 domain series: the tripped and failing
// domains have theirs, only 10 domains have any, the hooks' latency has 10
// domains and _other, and the totals count all 1,000.
func TestSeriesAreBoundedAndUnhealthyDomainsKeepTheirs(t *testing.T) {
	const n, k = 1000, 10
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, metrics.Config{DomainSeries: k})
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.NewFake(epoch)
	b := newBreaker(t, breaker.Config{Clock: clk})
	if err := m.Observe(b); err != nil {
		t.Fatal(err)
	}
	if err := m.Observe(b); err != nil {
		t.Fatal(err)
	}
	hook := metrics.OutcomeHook(m)
	ok := circuit.Result{Class: circuit.Success, Latency: 30 * time.Millisecond}
	bad := circuit.Result{Class: circuit.Degraded, Latency: 30 * time.Millisecond}
	send := func(d string, o circuit.Result) {
		tk, err := b.Allow(d)
		if err != nil {
			return
		}
		b.Record(tk, o)
		hook(observe.Attempt{Domain: d, Result: o})
	}
	for i := range n {
		send("shop-"+strconv.Itoa(i)+".test", ok)
	}
	for range breaker.Standard().Settings().FailuresToTrip() {
		send("shop-500.test", bad) // tripped
	}
	send("shop-700.test", bad) // a failure in its window
	send("shop-900.test", bad)

	s := scrape(t, serve(t, reg).URL())
	if got := s.value(t, "breakwater_breaker_state", "domain", "shop-500.test", "state", "open"); got != 1 {
		t.Errorf("the tripped domain's open state = %v, want 1", got)
	}
	for _, d := range []string{"shop-700.test", "shop-900.test"} {
		if len(s.find("breakwater_breaker_state", map[string]string{"domain": d})) != 3 {
			t.Errorf("failing domain %s has no state series of its own", d)
		}
	}
	domains := map[string]bool{}
	for _, mt := range s["breakwater_breaker_info"].GetMetric() {
		for _, l := range mt.GetLabel() {
			if l.GetName() == "domain" {
				domains[l.GetValue()] = true
			}
		}
	}
	if len(domains) != k {
		t.Errorf("%d domains have series of their own, want %d", len(domains), k)
	}
	lat := map[string]bool{}
	for _, mt := range s["breakwater_request_duration_seconds"].GetMetric() {
		for _, l := range mt.GetLabel() {
			if l.GetName() == "domain" {
				lat[l.GetValue()] = true
			}
		}
	}
	if len(lat) != k+1 || !lat[metrics.OtherDomains] {
		t.Errorf("latency histogram has %d domain labels (want %d and %q)", len(lat), k+1, metrics.OtherDomains)
	}
	if got := s.value(t, "breakwater_domains", "state", "closed"); got != n-1 {
		t.Errorf("closed domains = %v, want %d", got, n-1)
	}
	if got := s.value(t, "breakwater_domains_unhealthy"); got != 3 {
		t.Errorf("unhealthy domains = %v, want 3", got)
	}
	if got := s.value(t, "breakwater_all_outcomes_total", "class", "success"); got != n {
		t.Errorf("all successes = %v, want %d", got, n)
	}
}

// With every domain given its own series (DomainSeries < 0), the totals
// are the breaker's own: compacted domains are counted as compacted, and a
// domain with failures in its window is unhealthy, as with a bound.
func TestEveryDomainsSeriesKeepsTheTotals(t *testing.T) {
	const ttl = 10 * time.Second
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, metrics.Config{DomainSeries: -1})
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.NewFake(epoch)
	b := newBreaker(t, breaker.Config{Clock: clk, IdleTTL: ttl})
	if err := m.Observe(b); err != nil {
		t.Fatal(err)
	}
	send := func(d string, o circuit.Result) {
		tk, err := b.Allow(d)
		if err != nil {
			t.Fatal(err)
		}
		b.Record(tk, o)
	}
	send("idle.test", circuit.Result{Class: circuit.Success})
	b.Compact()
	clk.Advance(ttl)
	b.Compact()
	send("failing.test", circuit.Result{Class: circuit.Degraded})

	s := scrape(t, serve(t, reg).URL())
	if got := s.value(t, "breakwater_domains_compacted"); got != 1 {
		t.Errorf("domains_compacted = %v, want 1 (idle.test)", got)
	}
	if got := s.value(t, "breakwater_domains_unhealthy"); got != 1 {
		t.Errorf("domains_unhealthy = %v, want 1 (failing.test, a failure in its window)", got)
	}
	for _, d := range []string{"idle.test", "failing.test"} {
		if len(s.find("breakwater_breaker_state", map[string]string{"domain": d})) != 3 {
			t.Errorf("%s has no state series of its own", d)
		}
	}
}
