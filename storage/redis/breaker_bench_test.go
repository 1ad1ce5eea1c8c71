package redis_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	bwclock "github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
)

// benchCircuit is one shared circuit on the test Redis, with the client's
// round trips counted and the scripts loaded.
func benchCircuit(b *testing.B, domain string) (circuit.Circuit, *roundTrips) {
	b.Helper()
	client, prefix := redistest.New(b)
	rt := &roundTrips{}
	client.AddHook(rt)
	bs, err := redis.NewBreakerStore(client, "bench", redis.Config{Namespace: prefix})
	if err != nil {
		b.Fatal(err)
	}
	c, err := bs.Circuit(domain, breaker.Standard().Settings())
	if err != nil {
		b.Fatal(err)
	}
	p, _, err := c.Allow(bwclock.System)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Record(bwclock.System, p, circuit.Result{Class: circuit.Success, Latency: time.Millisecond}); err != nil {
		b.Fatal(err)
	}
	return c, rt
}

// BenchmarkBreakerDecision is one request's breaker work on a closed
// shared circuit: Allow, then Record a success (the window ring turns over).
func BenchmarkBreakerDecision(b *testing.B) {
	c, rt := benchCircuit(b, "shop.test:8080")
	out := circuit.Result{Class: circuit.Success, Latency: 40 * time.Millisecond}
	var allowTrips, recordTrips int64
	b.ReportAllocs()
	b.ResetTimer()
	began := time.Now()
	for b.Loop() {
		n0 := rt.n.Load()
		p, _, err := c.Allow(bwclock.System)
		if err != nil {
			b.Fatal(err)
		}
		n1 := rt.n.Load()
		if _, err := c.Record(bwclock.System, p, out); err != nil {
			b.Fatal(err)
		}
		allowTrips += n1 - n0
		recordTrips += rt.n.Load() - n1
	}
	el := time.Since(began).Seconds()
	b.ReportMetric(float64(b.N)/el, "decisions/s")
	b.ReportMetric(float64(allowTrips)/float64(b.N), "roundtrips/allow")
	b.ReportMetric(float64(recordTrips)/float64(b.N), "roundtrips/record")
}

// BenchmarkBreakerDecisionParallel runs the same from 4 goroutines per CPU,
// each on a domain of its own, over one client: the throughput a worker
// process gets.
func BenchmarkBreakerDecisionParallel(b *testing.B) {
	client, prefix := redistest.New(b)
	rt := &roundTrips{}
	client.AddHook(rt)
	bs, err := redis.NewBreakerStore(client, "bench", redis.Config{Namespace: prefix})
	if err != nil {
		b.Fatal(err)
	}
	var id atomic.Int64
	out := circuit.Result{Class: circuit.Success, Latency: 40 * time.Millisecond}
	b.SetParallelism(4)
	b.ReportAllocs()
	start := rt.n.Load()
	b.ResetTimer()
	began := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		c, err := bs.Circuit("shop-"+strconv.FormatInt(id.Add(1), 10)+".test", breaker.Standard().Settings())
		if err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			p, _, err := c.Allow(bwclock.System)
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := c.Record(bwclock.System, p, out); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "decisions/s")
	b.ReportMetric(float64(rt.n.Load()-start)/float64(2*b.N), "roundtrips/call")
}

// BenchmarkBreakerDecisionInProcess is the same work on the in-process
// circuit, for scale.
func BenchmarkBreakerDecisionInProcess(b *testing.B) {
	c, err := circuit.MemoryStore{}.Circuit("shop.test:8080", breaker.Standard().Settings())
	if err != nil {
		b.Fatal(err)
	}
	out := circuit.Result{Class: circuit.Success, Latency: 40 * time.Millisecond}
	b.ReportAllocs()
	began := time.Now()
	for b.Loop() {
		p, _, _ := c.Allow(bwclock.System)
		_, _ = c.Record(bwclock.System, p, out)
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "decisions/s")
}
