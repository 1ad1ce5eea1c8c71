package metrics_test

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// A circuit's whole cycle, driven on a fake clock: every transition is
// counted once under its reason, and the state gauge follows.
func TestTransitionsCountEveryStateChange(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.NewFake(epoch)
	p := breaker.Standard()
	p.Name, p.MaxCooldown = "no-growth", 0 // a fixed cooldown, so the clock can be moved past it exactly
	b, err := breaker.New(breaker.Config{Profile: p, Clock: clk})
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
	const d = "shop.example"
	record := func(c circuit.Class) {
		tk, err := b.Allow(d)
		if err != nil {
			t.Fatalf("Allow: %v", err)
		}
		b.Record(tk, circuit.Result{Class: c, Latency: 50 * time.Millisecond})
	}
	for range p.Settings().FailuresToTrip() {
		record(circuit.Degraded) // the failures that trip it
	}
	s := scrape(t, srv.URL())
	if got := s.value(t, "breakwater_breaker_state", "domain", d, "state", "open"); got != 1 {
		t.Fatalf("not open after the failures that trip it")
	}
	clk.Advance(p.Cooldown)
	for range p.HalfOpenProbes {
		record(circuit.Success) // the first Allow moves it half-open; the probes pass
	}
	s = scrape(t, srv.URL())
	for _, tr := range []struct{ from, to, reason string }{
		{"closed", "open", circuit.ReasonFailureRate},
		{"open", "half-open", circuit.ReasonCooldownElapsed},
		{"half-open", "closed", circuit.ReasonProbesPassed},
	} {
		if got := s.value(t, "breakwater_breaker_transitions_total", "domain", d, "from", tr.from, "to", tr.to, "reason", tr.reason); got != 1 {
			t.Errorf("%s→%s (%s) counted %v times, want 1", tr.from, tr.to, tr.reason, got)
		}
	}
	if n := len(s.find("breakwater_breaker_transitions_total", nil)); n != 3 {
		t.Errorf("%d transition series, want 3", n)
	}
	if got := s.value(t, "breakwater_breaker_state", "domain", d, "state", "closed"); got != 1 {
		t.Errorf("not closed after the probes passed")
	}
	if got := s.value(t, "breakwater_breaker_info", "domain", d, "profile", "no-growth"); got != 1 {
		t.Errorf("profile label")
	}
}

// A latency slope raises a degrading warning before any error: the counter
// moves once per warning the breaker emits.
func TestDegradingWarningsAreCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	warnings := 0
	b := newBreaker(t, breaker.Config{OnDegrading: func(string, time.Duration, time.Duration) { warnings++ }})
	if err := m.Observe(b); err != nil {
		t.Fatal(err)
	}
	if err := m.Observe(b); err != nil {
		t.Fatal(err)
	}
	const d = "slow.example"
	latency := 40 * time.Millisecond
	for i := 0; i < 400 && warnings == 0; i++ {
		if i >= 60 {
			latency += 20 * time.Millisecond // the slope: bugs are flat, degradation climbs
		}
		tk, err := b.Allow(d)
		if err != nil {
			t.Fatalf("Allow after %d successes: %v", i, err)
		}
		b.Record(tk, circuit.Result{Class: circuit.Success, Latency: min(latency, 4*time.Second)})
	}
	if warnings == 0 {
		t.Fatal("the breaker never warned of the slope; the test drives it wrong")
	}
	s := scrape(t, serve(t, reg).URL())
	if got := s.value(t, "breakwater_degrading_total", "domain", d); got != float64(warnings) {
		t.Errorf("degrading_total = %v, the breaker warned %d times", got, warnings)
	}
	if got := s.value(t, "breakwater_outcomes_total", "domain", d, "class", "degraded"); got != 0 {
		t.Errorf("no error happened, yet degraded = %v", got)
	}
}
