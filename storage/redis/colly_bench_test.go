package redis_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/gocolly/colly/v2"
)

func benchColly(b *testing.B) (*redis.CollyStorage, *roundTrips) {
	b.Helper()
	client, prefix := redistest.New(b)
	rt := &roundTrips{}
	client.AddHook(rt)
	cs, err := redis.NewCollyStorage(client, "bench", redis.Config{Namespace: prefix})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cs.IsVisited(0); err != nil { // load the script
		b.Fatal(err)
	}
	return cs, rt
}

// BenchmarkCollyIsVisitedClaim is Colly's check-and-set for a new URL
// fetched outside the queue: IsVisited claims it, Visited costs nothing.
func BenchmarkCollyIsVisitedClaim(b *testing.B) {
	cs, rt := benchColly(b)
	b.ReportAllocs()
	start := rt.n.Load()
	began := time.Now()
	for i := uint64(1); b.Loop(); i++ {
		if v, err := cs.IsVisited(i); err != nil || v {
			b.Fatalf("IsVisited(%d) = %v, %v", i, v, err)
		}
		if err := cs.Visited(i); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "claims/s")
	b.ReportMetric(float64(rt.n.Load()-start)/float64(b.N), "roundtrips/url")
}

// BenchmarkCollyJobCycle is one queued request's life on one worker, as
// Colly's queue drives it: AddRequest, QueueSize, GetRequest, then Ack
// from the outcome hook.
func BenchmarkCollyJobCycle(b *testing.B) {
	cs, rt := benchColly(b)
	c := colly.NewCollector()
	var id atomic.Int64
	b.ReportAllocs()
	start := rt.n.Load()
	began := time.Now()
	for b.Loop() {
		req := []byte(fmt.Sprintf(`{"URL":"https://shop.example/p/%d","Method":"GET","Depth":1}`, id.Add(1)))
		if err := cs.AddRequest(req); err != nil {
			b.Fatal(err)
		}
		if _, err := cs.QueueSize(); err != nil {
			b.Fatal(err)
		}
		raw, err := cs.GetRequest()
		if err != nil {
			b.Fatal(err)
		}
		r, err := c.UnmarshalRequest(raw)
		if err != nil {
			b.Fatal(err)
		}
		if err := cs.Ack(r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "jobs/s")
	b.ReportMetric(float64(rt.n.Load()-start)/float64(b.N), "roundtrips/job")
}
