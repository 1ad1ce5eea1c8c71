package circuitbench

import (
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sony/gobreaker/v2"
)

// gobreaker v2's TwoStepCircuitBreaker doing what extensions/breaker's
// benchmarks of the same names do with Breakwater (see the package doc).

func BenchmarkClosedOneDomain(b *testing.B) {
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

var errDown = errors.New("down.test: 503")

func BenchmarkOpenRefusal(b *testing.B) {
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

// BenchmarkClosedParallelLineTransfer is no circuit: two goroutines take
// turns writing one word, so an op is that cache line going to the other
// CPU and back. It measures the machine beside the parallel rows, which
// move with it: on the 2-core VM of docs/performance.md it read 134–146
// ns and then 439 ns minutes apart, and Breakwater's 1,000-domain row
// 118–121 ns and then 304–331 with it.
func BenchmarkClosedParallelLineTransfer(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("two goroutines spinning by turns need two CPUs")
	}
	var turn atomic.Int64
	n := int64(b.N)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(1); i < 2*n; i += 2 {
			for turn.Load() != i {
			}
			turn.Store(i + 1)
		}
	}()
	b.ResetTimer()
	for i := int64(0); i < 2*n; i += 2 {
		for turn.Load() != i {
		}
		turn.Store(i + 1)
	}
	<-done
}
