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

// The cost the metrics add to the breaker's hot path: Allow and Record on a
// closed circuit, without and with the metrics' hooks, side by side. The
// outcome hook runs from the Colly wiring, so the hooks are called here the
// way it calls them.
func BenchmarkClosedAllowRecord(b *testing.B) {
	attempt := observe.Attempt{Domain: "shop.example", Result: circuit.Result{Class: circuit.Success, Latency: 120 * time.Millisecond}}
	run := func(b *testing.B, hooks []func(observe.Attempt)) {
		br, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			t, _ := br.Allow("shop.example")
			br.Record(t, attempt.Result)
			for _, h := range hooks {
				h(attempt)
			}
		}
	}
	b.Run("breaker", func(b *testing.B) { run(b, nil) })
	b.Run("breaker+metrics", func(b *testing.B) {
		m, _ := metrics.New(prometheus.NewRegistry())
		run(b, []func(observe.Attempt){metrics.OutcomeHook(m)})
	})
}

// A scrape's cost grows with the domains: this is the collector reading
// Stats for 100 and 1000 domains.
func BenchmarkGather(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(strconv.Itoa(n)+"domains", func(b *testing.B) {
			reg := prometheus.NewRegistry()
			m, _ := metrics.New(reg)
			br, _ := breaker.New(breaker.Config{Profile: breaker.Standard()})
			_ = m.Observe(br)
			hook := metrics.OutcomeHook(m)
			for i := range n {
				d := "shop" + strconv.Itoa(i) + ".example"
				t, _ := br.Allow(d)
				o := circuit.Result{Class: circuit.Success, Latency: 80 * time.Millisecond}
				br.Record(t, o)
				hook(observe.Attempt{Domain: d, Result: o})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := reg.Gather(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A broad crawl's scrape: n domains through the public path and the
// hooks, 1 % of them failing (their windows hold failures), then gathered.
// "compacted" leaves the healthy ones idle past the TTL first, as a long
// crawl's steady state has them; "live" scrapes them whole. Reports the
// series a scrape returns. Run:
//
//	go test -run '^$' -bench GatherBroad -benchtime 5x ./metrics/
func BenchmarkGatherBroad(b *testing.B) {
	for _, c := range []struct {
		name    string
		n       int
		compact bool
	}{{"100000domains/live", 100_000, false}, {"1000000domains/compacted", 1_000_000, true}} {
		b.Run(c.name, func(b *testing.B) {
			clk := clocktest.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
			reg := prometheus.NewRegistry()
			m, _ := metrics.New(reg)
			br, _ := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk})
			_ = m.Observe(br)
			hook := metrics.OutcomeHook(m)
			for i := range c.n {
				d := "shop" + strconv.Itoa(i) + ".example"
				for j := range 2 {
					t, _ := br.Allow(d)
					o := circuit.Result{Class: circuit.Success, Latency: 80 * time.Millisecond}
					if i%100 == 0 && j == 1 {
						o.Class = circuit.Degraded
					}
					br.Record(t, o)
					hook(observe.Attempt{Domain: d, Result: o})
				}
			}
			if c.compact {
				br.Compact()
				clk.Advance(breaker.DefaultIdleTTL)
				br.Compact()
			}
			b.ReportAllocs()
			b.ResetTimer()
			series := 0
			for b.Loop() {
				mfs, err := reg.Gather()
				if err != nil {
					b.Fatal(err)
				}
				series = 0
				for _, mf := range mfs {
					for _, mt := range mf.GetMetric() {
						series++
						if h := mt.GetHistogram(); h != nil {
							series += len(h.GetBucket()) + 1 // _bucket{le=…}, +Inf, _sum, _count
						}
					}
				}
			}
			b.ReportMetric(float64(series), "series")
		})
	}
}
