package redis_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	goredis "github.com/redis/go-redis/v9"
)

// exampleClient connects to the Redis at REDIS_URL (default the local one).
func exampleClient() (*goredis.Client, error) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	opts.ContextTimeoutEnabled = true
	return goredis.NewClient(opts), nil
}

// Two workers share one domain's circuit: the first trips it, the second is
// refused at once, and after the cooldown the single probe is one worker's.
func ExampleNewBreakerStore() {
	client, err := exampleClient()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	crawl := "example-breaker-" + strconv.Itoa(os.Getpid())
	defer redis.DeleteCrawl(context.Background(), client, "bwexample", crawl, 1)
	p := breaker.Profile{Name: "tiny", WindowSize: 4, FailureThreshold: 0.5, Cooldown: time.Minute, HalfOpenProbes: 1}
	var workers []circuit.Circuit
	for range 2 { // in real life: two processes, each with its own client
		bs, err := redis.NewBreakerStore(client, crawl, redis.Config{Namespace: "bwexample"})
		if err != nil {
			fmt.Println(err)
			return
		}
		c, err := bs.Circuit("shop.example", p.Settings())
		if err != nil {
			fmt.Println(err)
			return
		}
		workers = append(workers, c)
	}
	clk := clocktest.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	for range 4 {
		permit, _, _ := workers[0].Allow(clk)
		t, _ := workers[0].Record(clk, permit, circuit.Result{Class: circuit.Degraded, Latency: 30 * time.Millisecond})
		if t.From != t.To {
			fmt.Printf("worker 0: %s → %s (%s), failure rate %.1f, retry at %s\n", t.From, t.To, t.Reason, t.FailureRate, t.RetryAt.Format("15:04:05"))
		}
	}
	_, _, err = workers[1].Allow(clk)
	var open *circuit.OpenError
	fmt.Println("worker 1 refused:", errors.As(err, &open), open.State)

	clk.Advance(time.Minute)
	p0, t, _ := workers[0].Allow(clk)
	fmt.Printf("worker 0: %s → %s, probe %v\n", t.From, t.To, p0.Probe)
	_, _, err = workers[1].Allow(clk)
	fmt.Println("worker 1 refused:", errors.As(err, &open), open.State)
	t, _ = workers[0].Record(clk, p0, circuit.Result{Class: circuit.Success, Latency: 20 * time.Millisecond})
	fmt.Printf("worker 0: %s → %s (%s)\n", t.From, t.To, t.Reason)
	// Output:
	// worker 0: closed → open (failure_rate), failure rate 1.0, retry at 12:01:00
	// worker 1 refused: true open
	// worker 0: open → half-open, probe true
	// worker 1 refused: true half-open
	// worker 0: half-open → closed (probes_passed)
}

// Two workers crawl one site through Colly's queue package: the seeds both
// add are queued once, and every page is fetched once, by one of them.
func ExampleNewCollyStorage() {
	client, err := exampleClient()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	var hits sync.Map // path → *atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := hits.LoadOrStore(r.URL.Path, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		fmt.Fprint(w, `<a href="/p/1">1</a> <a href="/p/2">2</a> <a href="/p/3">3</a>`)
	}))
	defer site.Close()
	crawl := "example-colly-" + strconv.Itoa(os.Getpid())
	defer redis.DeleteCrawl(context.Background(), client, "bwexample", crawl, 1)

	var wg sync.WaitGroup
	for range 2 {
		cs, err := redis.NewCollyStorage(client, crawl, redis.Config{Namespace: "bwexample", PollInterval: 10 * time.Millisecond})
		if err != nil {
			fmt.Println(err)
			return
		}
		c := colly.NewCollector()
		cs.Register(c)
		q, _ := queue.New(2, cs)
		c.OnHTML("a[href]", func(e *colly.HTMLElement) { q.AddURL(e.Request.AbsoluteURL(e.Attr("href"))) })
		c.OnScraped(func(r *colly.Response) { cs.Ack(r.Request) }) // or let it follow the breaker: breakwater.Use(c, b, cs)
		c.OnError(func(r *colly.Response, err error) { cs.Fail(r.Request, err) })
		q.AddURL(site.URL + "/")
		wg.Go(func() { q.Run(c) })
	}
	wg.Wait()
	for _, path := range []string{"/", "/p/1", "/p/2", "/p/3"} {
		n, _ := hits.Load(path)
		fmt.Println(path, "fetched", n.(*atomic.Int32).Load(), "time(s)")
	}
	// Output:
	// / fetched 1 time(s)
	// /p/1 fetched 1 time(s)
	// /p/2 fetched 1 time(s)
	// /p/3 fetched 1 time(s)
}

// The checkpoint's records, in Redis where every worker reaches them.
func ExampleOpenCheckpoint() {
	client, err := exampleClient()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	crawl := "example-checkpoint-" + strconv.Itoa(os.Getpid())
	defer redis.DeleteCrawl(context.Background(), client, "bwexample", crawl, 1)
	cp, err := redis.OpenCheckpoint(client, crawl, redis.Config{Namespace: "bwexample"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cp.Close()
	cp.Put(
		storage.Record{ID: 1, URL: "https://shop.example/p/1", State: storage.Done, Attempts: 1},
		storage.Record{ID: 2, URL: "https://shop.example/p/2", State: storage.Parked},
	)
	counts, _ := cp.Counts()
	fmt.Println("done:", counts[storage.Done], "parked:", counts[storage.Parked])
	cp.Scan(func(r storage.Record) error {
		fmt.Println(r.Seq, r.State, r.URL)
		return nil
	}, storage.Parked)
	// Output:
	// done: 1 parked: 1
	// 2 parked https://shop.example/p/2
}
