package redis_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	bwclock "github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// The fleet benchmarks measure what a crawl's fleet asks of Redis, against
// one server (redistest.New: REDIS_URL, else a redis-server of the test
// binary's) and a 3-master Redis Cluster the benchmark starts, with the
// crawl in one slot (shards=1) or spread over three (shards=3, one per
// master), for 1, 2 and 4 workers. A worker is a goroutine with a client
// (and connection pool) of its own, working back to back; the figure is
// the fleet's total per second:
//
//	go test ./storage/redis -run '^$' -bench 'Fleet' -benchtime 3s
//
// Everything runs on one machine: the Redis processes and the workers
// share its cores, so the figures say what this machine carries, and how
// the rates move with workers and masters, not what separate machines
// would.

// fleetBackend is a Redis to run the fleet against.
type fleetBackend struct {
	name      string
	newClient func(b *testing.B) goredis.UniversalClient
}

func fleetBackends(b *testing.B) []fleetBackend {
	b.Helper()
	c := redistest.NewCluster(b, 3)
	return []fleetBackend{
		{"server", func(b *testing.B) goredis.UniversalClient { return redistest.Client(b) }},
		{"cluster3", func(b *testing.B) goredis.UniversalClient { return c.Client(b) }},
	}
}

var fleetRun atomic.Int64

// fleetNamespace is a namespace no other run of the benchmark uses.
func fleetNamespace() string {
	return "bwbench:" + strconv.FormatInt(fleetRun.Add(1), 10) + ":" + strconv.Itoa(rand.IntN(1e9))
}

// redisCPU is the CPU time (user + system) the Redis processes behind
// client have used so far: every master's, for a cluster.
func redisCPU(ctx context.Context, client goredis.UniversalClient) (time.Duration, error) {
	var mu sync.Mutex
	var total float64
	add := func(ctx context.Context, c *goredis.Client) error {
		info, err := c.Info(ctx, "cpu").Result()
		if err != nil {
			return err
		}
		var user, sys float64
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "used_cpu_user:"); ok {
				user, _ = strconv.ParseFloat(v, 64)
			}
			if v, ok := strings.CutPrefix(line, "used_cpu_sys:"); ok {
				sys, _ = strconv.ParseFloat(v, 64)
			}
		}
		mu.Lock()
		total += user + sys
		mu.Unlock()
		return nil
	}
	var err error
	switch c := client.(type) {
	case *goredis.ClusterClient:
		err = c.ForEachMaster(ctx, add)
	case *goredis.Client:
		err = add(ctx, c)
	default:
		err = fmt.Errorf("client %T", client)
	}
	return time.Duration(total * float64(time.Second)), err
}

// runFleet runs op b.N times in all over workers goroutines and reports
// the rate as unit/s, and the CPU time Redis spent per op (all masters
// together) as µs-redis/op: the figure that says how many ops one Redis
// core serves when the workers run elsewhere.
func runFleet(b *testing.B, workers int, unit string, probe goredis.UniversalClient, op func(w int) error) {
	b.Helper()
	ctx := context.Background()
	cpu0, err := redisCPU(ctx, probe)
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	b.ResetTimer()
	began := time.Now()
	for w := range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := op(w); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu1, err := redisCPU(ctx, probe)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/took.Seconds(), unit+"/s")
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "µs-redis/op")
}

// BenchmarkFleetClaims is a job's claim and its ack (what a worker asks
// of the queue for each URL besides adding it), the queue filled
// beforehand with jobs of 100 domains.
func BenchmarkFleetClaims(b *testing.B) {
	for _, be := range fleetBackends(b) {
		for _, shards := range []int{1, 3} {
			for _, workers := range []int{1, 2, 4} {
				b.Run(fmt.Sprintf("%s/shards=%d/workers=%d", be.name, shards, workers), func(b *testing.B) {
					ns := fleetNamespace()
					opts := redis.Config{Namespace: ns, Shards: shards}
					qs := make([]*redis.Queue, workers)
					probe := be.newClient(b)
					for w := range qs {
						q, err := redis.NewQueue(be.newClient(b), "bench", opts)
						if err != nil {
							b.Fatal(err)
						}
						qs[w] = q
					}
					ctx := context.Background()
					jobs := make([]*redis.Job, 0, 256)
					for i := 0; i < b.N+workers; i++ {
						jobs = append(jobs, &redis.Job{ID: strconv.Itoa(i), URL: fmt.Sprintf("https://d%d.example/p/%d", i%100, i), Request: benchRequest})
						if len(jobs) == cap(jobs) || i == b.N+workers-1 {
							if _, err := qs[0].Enqueue(ctx, jobs...); err != nil {
								b.Fatal(err)
							}
							jobs = jobs[:0]
						}
					}
					runFleet(b, workers, "claims", probe, func(w int) error {
						j, err := qs[w].Claim(ctx)
						if err != nil {
							return err
						}
						return qs[w].Ack(ctx, j)
					})
				})
			}
		}
	}
}

// BenchmarkFleetBreakerDecisions is one request's breaker work on a closed
// shared circuit: Allow, then Record a success, for a domain drawn from
// 100 at random.
func BenchmarkFleetBreakerDecisions(b *testing.B) {
	const domains = 100
	for _, be := range fleetBackends(b) {
		for _, shards := range []int{1, 3} {
			for _, workers := range []int{1, 2, 4} {
				b.Run(fmt.Sprintf("%s/shards=%d/workers=%d", be.name, shards, workers), func(b *testing.B) {
					ns := fleetNamespace()
					circuits := make([][]circuit.Circuit, workers)
					probe := be.newClient(b)
					for w := range circuits {
						bs, err := redis.NewBreakerStore(be.newClient(b), "bench", redis.Config{Namespace: ns, Shards: shards})
						if err != nil {
							b.Fatal(err)
						}
						for d := range domains {
							c, err := bs.Circuit("d"+strconv.Itoa(d)+".example", breaker.Standard().Settings())
							if err != nil {
								b.Fatal(err)
							}
							circuits[w] = append(circuits[w], c)
						}
					}
					out := circuit.Result{Class: circuit.Success, Latency: 40 * time.Millisecond}
					rngs := make([]*rand.Rand, workers)
					for w := range rngs {
						rngs[w] = rand.New(rand.NewPCG(uint64(w), 7))
					}
					runFleet(b, workers, "decisions", probe, func(w int) error {
						c := circuits[w][rngs[w].IntN(domains)]
						p, _, err := c.Allow(bwclock.System)
						if err != nil {
							return err
						}
						_, err = c.Record(bwclock.System, p, out)
						return err
					})
				})
			}
		}
	}
}

// BenchmarkFleetURLs is all a worker asks of Redis for one URL of a crawl
// without failures: the URL added to the queue, claimed and acked, and
// its request's breaker decision (Allow and Record) on one of 100
// domains. Colly's storage adds a visited-set check to the add and a
// visited mark to the ack, inside the same scripts. The queue holds 1,000
// ready jobs beforehand, as a crawl's frontier does in its stride, so
// every shard has work (an empty shard costs a claim that finds nothing).
func BenchmarkFleetURLs(b *testing.B) {
	const domains = 100
	for _, be := range fleetBackends(b) {
		for _, shards := range []int{1, 3} {
			for _, workers := range []int{1, 2, 4} {
				b.Run(fmt.Sprintf("%s/shards=%d/workers=%d", be.name, shards, workers), func(b *testing.B) {
					ns := fleetNamespace()
					opts := redis.Config{Namespace: ns, Shards: shards}
					probe := be.newClient(b)
					qs := make([]*redis.Queue, workers)
					circuits := make([][]circuit.Circuit, workers)
					for w := range workers {
						client := be.newClient(b)
						q, err := redis.NewQueue(client, "bench", opts)
						if err != nil {
							b.Fatal(err)
						}
						qs[w] = q
						bs, err := redis.NewBreakerStore(client, "bench", opts)
						if err != nil {
							b.Fatal(err)
						}
						for d := range domains {
							c, err := bs.Circuit("d"+strconv.Itoa(d)+".example", breaker.Standard().Settings())
							if err != nil {
								b.Fatal(err)
							}
							circuits[w] = append(circuits[w], c)
						}
					}
					ctx := context.Background()
					out := circuit.Result{Class: circuit.Success, Latency: 40 * time.Millisecond}
					var ids atomic.Int64
					var frontier []*redis.Job
					for range 1000 {
						i := ids.Add(1)
						frontier = append(frontier, &redis.Job{ID: strconv.FormatInt(i, 10), URL: fmt.Sprintf("https://d%d.example/p/%d", i%domains, i), Request: benchRequest})
					}
					if _, err := qs[0].Enqueue(ctx, frontier...); err != nil {
						b.Fatal(err)
					}
					runFleet(b, workers, "urls", probe, func(w int) error {
						i := ids.Add(1)
						d := int(i % domains)
						if _, err := qs[w].Enqueue(ctx, &redis.Job{ID: strconv.FormatInt(i, 10), URL: fmt.Sprintf("https://d%d.example/p/%d", d, i), Request: benchRequest}); err != nil {
							return err
						}
						j, err := qs[w].Claim(ctx)
						if err != nil {
							return err
						}
						p, _, err := circuits[w][d].Allow(bwclock.System)
						if err != nil {
							return err
						}
						if _, err := circuits[w][d].Record(bwclock.System, p, out); err != nil {
							return err
						}
						return qs[w].Ack(ctx, j)
					})
				})
			}
		}
	}
}
