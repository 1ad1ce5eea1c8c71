package breaker_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// The closed hot path, Allow then Record, and the refusal on an open
// circuit. gobreaker v2's TwoStepCircuitBreaker doing the same, under the
// same benchmark names, is in the bench module (bench/circuitbench), so
// that this module does not require gobreaker; side by side, from the
// repository root:
//
//	go test -run '^$' -bench 'Closed|Open' -benchmem ./extensions/breaker/ ./bench/circuitbench/

var success = circuit.Result{Class: circuit.Success, Latency: 40 * time.Millisecond}

func BenchmarkClosedOneDomain(b *testing.B) {
	b.Run("breakwater/circuit", func(b *testing.B) {
		c, _ := breaker.NewCircuit("shop.test", breaker.Standard())
		b.ReportAllocs()
		for b.Loop() {
			p, _, err := c.Allow(clock.System)
			if err != nil {
				b.Fatal(err)
			}
			c.Record(clock.System, p, success)
		}
	})
	b.Run("breakwater/breaker", func(b *testing.B) {
		br, _ := breaker.New(breaker.Config{Profile: breaker.Standard()})
		b.ReportAllocs()
		for b.Loop() {
			t, err := br.Allow("shop.test")
			if err != nil {
				b.Fatal(err)
			}
			br.Record(t, success)
		}
	})
}

func hosts(n int) []string {
	hs := make([]string, n)
	for i := range hs {
		hs[i] = "shop-" + strconv.Itoa(i) + ".test"
	}
	return hs
}

func BenchmarkClosedParallel1000Domains(b *testing.B) {
	hs := hosts(1000)
	b.Run("breakwater/breaker", func(b *testing.B) {
		br, _ := breaker.New(breaker.Config{Profile: breaker.Standard()})
		var next atomic.Uint64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := next.Add(7919)
			for pb.Next() {
				i++
				t, err := br.Allow(hs[i%1000])
				if err != nil {
					b.Fatal(err)
				}
				br.Record(t, success)
			}
		})
	})
}

func BenchmarkOpenRefusal(b *testing.B) {
	b.Run("breakwater/breaker", func(b *testing.B) {
		p := breaker.Standard()
		p.ConsecutiveFailures = 1
		br, _ := breaker.New(breaker.Config{Profile: p})
		t, _ := br.Allow("down.test")
		br.Record(t, circuit.Result{Class: circuit.Degraded})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := br.Allow("down.test"); err == nil {
				b.Fatal("allowed")
			}
		}
	})
}
