package metrics_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// The cost the metrics add to the breaker's hot path: Allow and Record on a
// closed circuit, without and with the metrics' hooks, side by side. The
// outcome hook runs from the Colly wiring, so the hooks are called here the
// way it calls them.
func BenchmarkClosedAllowRecord(b *testing.B) {
	attempt := breaker.Attempt{Domain: "shop.example", Outcome: breaker.Outcome{Class: breaker.Success, Latency: 120 * time.Millisecond}}
	run := func(b *testing.B, hooks []func(breaker.Attempt), opts ...breaker.Option) {
		br, err := breaker.New(breaker.Standard, opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			t, _ := br.Allow("shop.example")
			br.Record(t, attempt.Outcome)
			for _, h := range hooks {
				h(attempt)
			}
		}
	}
	b.Run("breaker", func(b *testing.B) { run(b, nil) })
	b.Run("breaker+metrics", func(b *testing.B) {
		m, _ := metrics.New(prometheus.NewRegistry())
		run(b, []func(breaker.Attempt){metrics.OutcomeHook(m)}, m.BreakerOptions()...)
	})
}

// A scrape's cost grows with the domains: this is the collector reading
// Stats for 100 and 1000 domains.
func BenchmarkGather(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(strconv.Itoa(n)+"domains", func(b *testing.B) {
			reg := prometheus.NewRegistry()
			m, _ := metrics.New(reg)
			br, _ := breaker.New(breaker.Standard, m.BreakerOptions()...)
			m.Watch(br)
			hook := metrics.OutcomeHook(m)
			for i := range n {
				d := "shop" + strconv.Itoa(i) + ".example"
				t, _ := br.Allow(d)
				o := breaker.Outcome{Class: breaker.Success, Latency: 80 * time.Millisecond}
				br.Record(t, o)
				hook(breaker.Attempt{Domain: d, Outcome: o})
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
