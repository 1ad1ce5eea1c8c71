package breaker_test

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/sony/gobreaker/v2"
)

// The closed hot path, Allow then Record, side by side with gobreaker v2's
// TwoStepCircuitBreaker doing the same. Run:
//
//	go test -run '^$' -bench . -benchmem ./extensions/breaker/

var success = breaker.Result{Class: breaker.Success, Latency: 40 * time.Millisecond}

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
		br, _ := breaker.New(breaker.Standard())
		b.ReportAllocs()
		for b.Loop() {
			t, err := br.Allow("shop.test")
			if err != nil {
				b.Fatal(err)
			}
			br.Record(t, success)
		}
	})
	b.Run("gobreaker/twostep", func(b *testing.B) {
		cb := gobreaker.NewTwoStepCircuitBreaker[any](gobreaker.Settings{Name: "shop.test"})
		b.ReportAllocs()
		for b.Loop() {
			done, err := cb.Allow()
			if err != nil {
				b.Fatal(err)
			}
			done(nil)
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
		br, _ := breaker.New(breaker.Standard())
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
	b.Run("gobreaker/twostep", func(b *testing.B) {
		// What a Go user writes by hand: a breaker per domain in a
		// sync.Map, created on first use.
		var m sync.Map
		get := func(h string) *gobreaker.TwoStepCircuitBreaker[any] {
			if v, ok := m.Load(h); ok {
				return v.(*gobreaker.TwoStepCircuitBreaker[any])
			}
			v, _ := m.LoadOrStore(h, gobreaker.NewTwoStepCircuitBreaker[any](gobreaker.Settings{Name: h}))
			return v.(*gobreaker.TwoStepCircuitBreaker[any])
		}
		var next atomic.Uint64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := next.Add(7919)
			for pb.Next() {
				i++
				done, err := get(hs[i%1000]).Allow()
				if err != nil {
					b.Fatal(err)
				}
				done(nil)
			}
		})
	})
}

func BenchmarkOpenRefusal(b *testing.B) {
	b.Run("breakwater/breaker", func(b *testing.B) {
		p := breaker.Standard()
		p.ConsecutiveFailures = 1
		br, _ := breaker.New(p)
		t, _ := br.Allow("down.test")
		br.Record(t, breaker.Result{Class: breaker.Degraded})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := br.Allow("down.test"); err == nil {
				b.Fatal("allowed")
			}
		}
	})
	b.Run("gobreaker/twostep", func(b *testing.B) {
		cb := gobreaker.NewTwoStepCircuitBreaker[any](gobreaker.Settings{Name: "down.test",
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 1 }})
		done, _ := cb.Allow()
		done(errDown)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Allow(); err == nil {
				b.Fatal("allowed")
			}
		}
	})
}

var errDown = &breaker.CircuitOpenError{Key: "down.test"}
