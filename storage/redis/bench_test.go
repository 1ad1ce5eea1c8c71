package redis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// roundTrips counts the client's trips to Redis: one per command, one per
// pipeline.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (r *roundTrips) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

func benchQueue(b *testing.B, c redis.Config) (*redis.Queue, *goredis.Client, *roundTrips) {
	b.Helper()
	client, prefix := redistest.New(b)
	rt := &roundTrips{}
	client.AddHook(rt)
	if c.Namespace == "" {
		c.Namespace = prefix
	}
	q, err := redis.NewQueue(client, "bench", c)
	if err != nil {
		b.Fatal(err)
	}
	// Warm the script cache so EVALSHA never falls back to EVAL in the loop.
	ctx := context.Background()
	if _, err := q.Enqueue(ctx, &redis.Job{URL: "https://warm.example/"}); err != nil {
		b.Fatal(err)
	}
	j, err := q.Claim(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := q.Ack(ctx, j); err != nil {
		b.Fatal(err)
	}
	return q, client, rt
}

var benchRequest = make([]byte, 400) // about the size of a marshalled Colly GET

// BenchmarkQueueCycle is one job's life on one worker: enqueue, claim, ack.
func BenchmarkQueueCycle(b *testing.B) {
	q, _, rt := benchQueue(b, redis.Config{})
	ctx := context.Background()
	var claimTrips int64
	b.ReportAllocs()
	b.ResetTimer()
	began := time.Now()
	for i := 0; b.Loop(); i++ {
		if _, err := q.Enqueue(ctx, &redis.Job{ID: strconv.Itoa(i), URL: "https://shop.example/p", Request: benchRequest}); err != nil {
			b.Fatal(err)
		}
		before := rt.n.Load()
		j, err := q.Claim(ctx)
		if err != nil {
			b.Fatal(err)
		}
		claimTrips += rt.n.Load() - before
		if err := q.Ack(ctx, j); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "claims/s")
	b.ReportMetric(float64(claimTrips)/float64(b.N), "roundtrips/claim")
}

// BenchmarkQueueCycleParallel runs the same cycle from 4 goroutines per CPU
// on one client, contending for the same queue.
func BenchmarkQueueCycleParallel(b *testing.B) {
	q, _, rt := benchQueue(b, redis.Config{})
	var id atomic.Int64
	b.SetParallelism(4)
	b.ReportAllocs()
	start := rt.n.Load()
	b.ResetTimer()
	began := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := q.Enqueue(ctx, &redis.Job{ID: strconv.FormatInt(id.Add(1), 10), URL: "https://shop.example/p", Request: benchRequest}); err != nil {
				b.Error(err)
				return
			}
			j, err := q.Claim(ctx)
			if err != nil { // another goroutine may have taken "our" job and left us an empty queue
				continue
			}
			if err := q.Ack(ctx, j); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "cycles/s")
	b.ReportMetric(float64(rt.n.Load()-start)/float64(b.N), "roundtrips/cycle")
}

// BenchmarkClaimFromBacklog claims and acks from a backlog of 10,000 jobs
// some of them delayed: the cost of a claim does not grow
// with the queue.
func BenchmarkClaimFromBacklog(b *testing.B) {
	const backlog = 10_000
	q, _, rt := benchQueue(b, redis.Config{})
	ctx := context.Background()
	fill := func(round int) {
		jobs := make([]*redis.Job, backlog)
		for i := range jobs {
			jobs[i] = &redis.Job{ID: fmt.Sprintf("%d-%d", round, i), URL: "https://shop.example/p", Request: benchRequest}
			if i%10 == 0 {
				jobs[i].NotBefore = time.Now().Add(-time.Second) // already due: promoted by a claim
			}
		}
		if _, err := q.Enqueue(ctx, jobs...); err != nil {
			b.Fatal(err)
		}
	}
	fill(0)
	left, round := backlog, 0
	var claimTrips int64
	b.ReportAllocs()
	b.ResetTimer()
	began := time.Now()
	for b.Loop() {
		if left == 0 {
			b.StopTimer()
			round++
			fill(round)
			left = backlog
			b.StartTimer()
		}
		before := rt.n.Load()
		j, err := q.Claim(ctx)
		if err != nil {
			b.Fatal(err)
		}
		claimTrips += rt.n.Load() - before
		if err := q.Ack(ctx, j); err != nil {
			b.Fatal(err)
		}
		left--
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "claims/s")
	b.ReportMetric(float64(claimTrips)/float64(b.N), "roundtrips/claim")
}

// BenchmarkPing is the floor: one round trip to the same Redis.
func BenchmarkPing(b *testing.B) {
	client, _ := redistest.New(b)
	ctx := context.Background()
	began := time.Now()
	for b.Loop() {
		if err := client.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "roundtrips/s")
}

// BenchmarkSeedPop is the baseline: seed 003's queue, one ZSET of JSON jobs
// scored eligible+offset, popped with ZRANGEBYSCORE then ZREM (retried when
// another worker's ZREM wins), no lease and no ack. Run from 4 goroutines
// per CPU to show the round trips that contention costs it.
func BenchmarkSeedPop(b *testing.B) {
	client, prefix := redistest.New(b)
	key := prefix + ":seed:queue"
	var id atomic.Int64
	var pops, trips atomic.Int64
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	began := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			raw, _ := json.Marshal(map[string]any{"id": id.Add(1), "url": "https://shop.example/p", "attempts": 0, "max_attempts": 5, "payload": benchRequest})
			now := float64(time.Now().UnixMilli())
			if err := client.ZAdd(ctx, key, goredis.Z{Score: now, Member: raw}).Err(); err != nil {
				b.Error(err)
				return
			}
			for try := 0; try < 10; try++ {
				got, err := client.ZRangeByScore(ctx, key, &goredis.ZRangeBy{Min: "-inf", Max: strconv.FormatFloat(now, 'f', -1, 64), Count: 1}).Result()
				trips.Add(1)
				if err != nil || len(got) == 0 {
					break
				}
				won, err := client.ZRem(ctx, key, got[0]).Result()
				trips.Add(1)
				if err == nil && won == 1 {
					pops.Add(1)
					break
				}
			}
		}
	})
	b.ReportMetric(float64(pops.Load())/time.Since(began).Seconds(), "claims/s")
	if p := pops.Load(); p > 0 {
		b.ReportMetric(float64(trips.Load())/float64(p), "roundtrips/claim")
	}
}
