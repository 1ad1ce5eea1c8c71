package metrics_test

import (
	"math"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// A real collector crawls two test stores, one failing from its 31st
// request on; /metrics, scraped over HTTP, tells the same story as the
// stores' own request logs and the breaker's Stats.
func TestScrapeShowsTheDegradingDomainTripped(t *testing.T) {
	bad := startStore(t, testserver.Config{Products: 60, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}})
	good := startStore(t, testserver.Config{Products: 25})

	// The healthy store gets its own profile, so the info series shows
	// the assignment.
	assign := map[string]breaker.Profile{good.Host(): breaker.Aggressive()}
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.NewFake(epoch)
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk, Pacing: breaker.Pacing{Parallelism: 2}, Domains: assign})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Observe(b); err != nil {
		t.Fatal(err)
	}
	if err := m.Observe(b); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, reg)

	c := colly.NewCollector()
	b.Register(c)
	for i := 1; i <= 60; i++ {
		c.Visit(bad.ProductURL(i))
	}
	for i := 1; i <= 25; i++ {
		c.Visit(good.ProductURL(i))
	}

	// What the stores saw is the ground truth.
	if bad.Count() != 40 || good.Count() != 25 {
		t.Fatalf("stores received %d and %d requests, want 40 (30 + 10 failures trip standard) and 25", bad.Count(), good.Count())
	}

	s := scrape(t, srv.URL())
	bh, gh := bad.Host(), good.Host()

	for state, want := range map[string]float64{"open": 1, "closed": 0, "half-open": 0} {
		if got := s.value(t, "breakwater_breaker_state", "domain", bh, "state", state); got != want {
			t.Errorf("state %s of the degrading domain = %v, want %v", state, got, want)
		}
	}
	if got := s.value(t, "breakwater_breaker_state", "domain", gh, "state", "closed"); got != 1 {
		t.Errorf("healthy domain not closed")
	}
	if got := s.value(t, "breakwater_breaker_transitions_total", "domain", bh, "from", "closed", "to", "open", "reason", circuit.ReasonFailureRate); got != 1 {
		t.Errorf("closed→open transitions = %v, want 1", got)
	}
	if n := len(s.find("breakwater_breaker_transitions_total", nil)); n != 1 {
		t.Errorf("%d transition series, want only the one trip", n)
	}
	if got := s.value(t, "breakwater_breaker_trips_total", "domain", bh); got != 1 {
		t.Errorf("trips = %v", got)
	}
	if got := s.value(t, "breakwater_breaker_retry_at_seconds", "domain", bh); got != float64(epoch.Add(time.Minute).Unix()) {
		t.Errorf("retry at %v, want the fake clock plus standard's 60 s cooldown", time.Unix(int64(got), 0).UTC())
	}
	if len(s.find("breakwater_breaker_retry_at_seconds", map[string]string{"domain": gh})) != 0 {
		t.Errorf("a closed domain has no retry time")
	}
	if got := s.value(t, "breakwater_refused_total", "domain", bh); got != 20 {
		t.Errorf("refused = %v, want 20 (requests 41..60)", got)
	}
	if got := s.value(t, "breakwater_breaker_info", "domain", bh, "profile", "standard"); got != 1 {
		t.Errorf("info for the degrading domain")
	}
	if got := s.value(t, "breakwater_breaker_info", "domain", gh, "profile", "aggressive"); got != 1 {
		t.Errorf("info for the healthy domain should name the profile the file assigned it")
	}

	// Every outcome counter is the breaker's own number, every class
	// present; the histogram counts every attempt that left, which is
	// what each store received.
	stats := b.Stats()
	if len(stats) != 2 {
		t.Fatalf("%d domains in Stats", len(stats))
	}
	for _, st := range stats {
		var sum int64
		for c := circuit.Success; c <= circuit.Excluded; c++ {
			got := s.value(t, "breakwater_outcomes_total", "domain", st.Domain, "class", c.String())
			if got != float64(st.Outcomes[c.String()]) {
				t.Errorf("%s outcomes{class=%s} = %v, Stats says %d", st.Domain, c, got, st.Outcomes[c.String()])
			}
			sum += st.Outcomes[c.String()]
		}
		if got := s.value(t, "breakwater_refused_total", "domain", st.Domain); got != float64(st.Refused) {
			t.Errorf("%s refused %v, Stats says %d", st.Domain, got, st.Refused)
		}
		h := s.find("breakwater_request_duration_seconds", map[string]string{"domain": st.Domain})
		if len(h) != 1 {
			t.Fatalf("%s: %d histograms", st.Domain, len(h))
		}
		if got := h[0].Histogram.GetSampleCount(); got != uint64(sum) {
			t.Errorf("%s: histogram counts %d attempts, outcomes sum to %d", st.Domain, got, sum)
		}
		if n := len(h[0].Histogram.GetBucket()); n != len(metrics.DefaultBuckets)+1 {
			t.Errorf("%d buckets, want the %d default bounds and +Inf", n, len(metrics.DefaultBuckets))
		}
		if got := h[0].Histogram.GetSampleSum(); got <= 0 || got > 30 {
			t.Errorf("%s: latencies sum to %v s, a loopback crawl takes well under that", st.Domain, got)
		}
		if got := s.value(t, "breakwater_success_ratio", "domain", st.Domain); math.Abs(got-st.SuccessRate) > 1e-9 {
			t.Errorf("%s success ratio %v, Stats %v", st.Domain, got, st.SuccessRate)
		}
		if got := s.value(t, "breakwater_adaptive_timeout_seconds", "domain", st.Domain); got != st.Timeout.Seconds() {
			t.Errorf("%s timeout %v, Stats %v", st.Domain, got, st.Timeout)
		}
		if got := s.value(t, "breakwater_pace_limit", "domain", st.Domain); got != 2 {
			t.Errorf("%s pace limit %v, want the configured 2", st.Domain, got)
		}
		if got := s.value(t, "breakwater_pace_in_flight", "domain", st.Domain); got != 0 {
			t.Errorf("%s in flight %v after the crawl", st.Domain, got)
		}
	}
	if got := s.value(t, "breakwater_outcomes_total", "domain", bh, "class", "degraded"); got != 10 {
		t.Errorf("degraded = %v, want 10", got)
	}
	if got := s.value(t, "breakwater_request_duration_seconds", "domain", bh); got != float64(bad.Count()) {
		t.Errorf("histogram count %v, the store received %d", got, bad.Count())
	}
	if got := s.value(t, "breakwater_request_duration_seconds", "domain", gh); got != float64(good.Count()) {
		t.Errorf("histogram count %v, the store received %d", got, good.Count())
	}
}

// A 429 with Retry-After halts the domain and the URL is sent again after
// the pause: the pace series count the pause and the time spent in it.
func TestScrapeShowsAThrottledDomainsPause(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 4, Scenario: testserver.Scenario{
		Mode: testserver.Throttle, After: 2, RetryAfter: time.Second, RecoverAfter: time.Millisecond}})
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err == nil {
		err = m.Observe(b)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Observe(b); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, reg)
	c := colly.NewCollector()
	b.Register(c)
	for i := 1; i <= 4; i++ {
		c.Visit(store.ProductURL(i))
	}
	if store.Count() != 5 {
		t.Fatalf("store received %d requests, want 5 (4 pages, one of them twice)", store.Count())
	}
	s := scrape(t, srv.URL())
	d := store.Host()
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"breakwater_outcomes_total", []string{"class", "throttled"}, 1},
		{"breakwater_outcomes_total", []string{"class", "success"}, 4},
		{"breakwater_pace_pauses_total", nil, 1},
		{"breakwater_pace_halted", nil, 0},
		{"breakwater_request_duration_seconds", nil, 5},
		{"breakwater_breaker_state", []string{"state", "closed"}, 1},
	}
	for _, c := range checks {
		if got := s.value(t, c.name, append([]string{"domain", d}, c.labels...)...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	st := b.Stats()[0]
	if got := s.value(t, "breakwater_pace_paused_seconds_total", "domain", d); got != st.Pace.PausedFor.Seconds() || got < 0.9 {
		t.Errorf("paused %v s; Stats %v; Retry-After asked for 1 s", got, st.Pace.PausedFor)
	}
	if got := s.value(t, "breakwater_pace_gap_seconds", "domain", d); got != st.Pace.Gap.Seconds() || got <= 0 {
		t.Errorf("gap %v s after a throttle, Stats %v: a throttle lengthens the gap", got, st.Pace.Gap)
	}
}
