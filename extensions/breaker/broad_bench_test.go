package breaker_test

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/internal/benchtest"
)

// BenchmarkIdleDomainBytes measures what one domain of a broad crawl costs
// the breaker once it is idle: N domains, each given two successes through
// the public path (Allow, Record), then left alone past the idle TTL; heap
// after GC, less the heap before, over N. "whole" keeps every domain whole
// (a negative Config.IdleTTL), as before compaction. Run:
//
//	go test -run '^$' -bench IdleDomainBytes -benchtime 1x ./extensions/breaker/
func BenchmarkIdleDomainBytes(b *testing.B) {
	const n = 100_000
	names := make([]string, n)
	for i := range names {
		names[i] = "shop-" + strconv.Itoa(i) + ".example"
	}
	for _, c := range []struct {
		name string
		p    breaker.Profile
		ttl  time.Duration
	}{{"standard", breaker.Standard(), 0}, {"aggressive", breaker.Aggressive(), 0}, {"standard/whole", breaker.Standard(), -1}} {
		p := c.p
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				clk := clocktest.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
				before := benchtest.LiveHeap()
				br, err := breaker.New(breaker.Config{Profile: p, Clock: clk, IdleTTL: c.ttl})
				if err != nil {
					b.Fatal(err)
				}
				ok := circuit.Result{Class: circuit.Success, Latency: 40 * time.Millisecond}
				for _, h := range names {
					for range 2 {
						t, err := br.Allow(h)
						if err != nil {
							b.Fatal(err)
						}
						br.Record(t, ok)
					}
				}
				idle(br, clk)
				after := benchtest.LiveHeap()
				b.ReportMetric(float64(after-before)/n, "B/domain")
				runtime.KeepAlive(br)
			}
		})
	}
}
