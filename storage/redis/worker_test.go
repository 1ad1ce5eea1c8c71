package redis_test

// A crawl worker as a user of the package writes one: Colly's queue over a
// CollyStorage, a breaker over a BreakerStore, each on a Redis client of
// its own. The end-to-end tests run several in this process, or re-run the
// test binary as a separate worker process (TestMain dispatches on
// workerEnv), so that one can be killed.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	goredis "github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// workerEnv carries a workerConfig (JSON) to a worker process.
const workerEnv = "BREAKWATER_REDIS_TEST_WORKER"

// workerConfig is one worker's settings; the same for every worker of a
// crawl but Name.
type workerConfig struct {
	Name        string
	Addr        string   // Redis
	Cluster     []string // a Redis Cluster's seeds, instead of Addr
	Shards      int      // Config.Shards, 0 for the default
	Namespace   string
	Crawl       string
	Seeds       []string
	Parallelism int
	Visibility  time.Duration
	Cooldown    time.Duration
	Poll        time.Duration
}

// e2eProfile is Standard with a cooldown a test can wait out, and without
// the latency rules, whose decisions a loaded 2-core machine could move.
func e2eProfile(cooldown time.Duration) breaker.Profile {
	p := breaker.Standard()
	p.Name, p.Cooldown, p.MaxCooldown = "e2e", cooldown, 0
	p.SlowCall, p.SlowCallRate, p.SlopeMultiple, p.SlopeFloor, p.TimeoutMultiple, p.TimeoutFloor, p.TimeoutAfter = 0, 0, 0, 0, 0, 0, 0
	return p
}

// workerEvent is one line a worker writes: a request that left with its
// job (start), one whose outcome was saved (done, with the class), a
// circuit transition, or the end of its Run.
type workerEvent struct {
	Worker string    `json:"w"`
	Ev     string    `json:"ev"`
	URL    string    `json:"url,omitempty"`
	Class  string    `json:"class,omitempty"`
	From   string    `json:"from,omitempty"`
	To     string    `json:"to,omitempty"`
	Reason string    `json:"reason,omitempty"`
	Err    string    `json:"err,omitempty"`
	At     time.Time `json:"at"`
}

// runWorker crawls until the crawl's queue is drained (or ctx ends). Every
// event goes to out as a JSON line; logs (the stores' Redis outage events)
// go to logs.
func runWorker(ctx context.Context, cfg workerConfig, out, logs io.Writer) error {
	var client goredis.UniversalClient
	if len(cfg.Cluster) > 0 {
		client = goredis.NewClusterClient(&goredis.ClusterOptions{
			Addrs: cfg.Cluster, ContextTimeoutEnabled: true, DisableIdentity: true,
			DialTimeout: 500 * time.Millisecond, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
			PoolSize: 2*cfg.Parallelism + 4,
		})
	} else {
		client = goredis.NewClient(&goredis.Options{
			Addr: cfg.Addr, ContextTimeoutEnabled: true, DisableIdentity: true,
			MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Millisecond, DialTimeout: 500 * time.Millisecond,
			ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, PoolSize: 2*cfg.Parallelism + 4,
		})
	}
	defer client.Close()
	log := zerolog.New(logs).With().Str("worker", cfg.Name).Logger()
	opts := []redis.Config{
		redis.Config{Namespace: cfg.Namespace, VisibilityTimeout: cfg.Visibility, PollInterval: cfg.Poll, BackoffBase: 20 * time.Millisecond, BackoffCap: 200 * time.Millisecond, ReconnectBase: 20 * time.Millisecond, ReconnectCap: 200 * time.Millisecond, MaxOutage: 30 * time.Second, CallTimeout: 2 * time.Second, Logger: log},
	}
	if cfg.Shards > 0 {
		opts = append(opts, redis.Config{Shards: cfg.Shards})
	}
	cs, err := redis.NewCollyStorage(client, cfg.Crawl, opts...)
	if err != nil {
		return err
	}
	defer cs.Close()
	bs, err := redis.NewBreakerStore(client, cfg.Crawl, opts...)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	enc := json.NewEncoder(out)
	emit := func(e workerEvent) {
		e.Worker, e.At = cfg.Name, time.Now()
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(e)
	}
	b, err := breaker.New(breaker.Config{Profile: e2eProfile(cfg.Cooldown), Store: bs, OnAttempt: func(a observe.Attempt) {
		if !a.Retrying {
			emit(workerEvent{Ev: "done", URL: a.Request.URL.String(), Class: a.Result.Class.String()})
		}
	}, OnRefused: func(r *colly.Request, e *circuit.OpenError) {
		emit(workerEvent{Ev: "refused", URL: r.URL.String()})
	}, OnTransition: func(t circuit.Transition) {
		emit(workerEvent{Ev: "transition", URL: t.Key, From: t.From.String(), To: t.To.String(), Reason: t.Reason})
	}},
	)
	if err != nil {
		return err
	}
	if err := cs.Observe(b); err != nil {
		return err
	}
	c := colly.NewCollector()
	c.SetRequestTimeout(10 * time.Second)
	cs.Register(c)
	b.Register(c)
	c.OnRequest(func(r *colly.Request) {
		if !r.IsAbort() {
			emit(workerEvent{Ev: "start", URL: r.URL.String()})
		}
	})
	q, err := queue.New(cfg.Parallelism, cs)
	if err != nil {
		return err
	}
	for _, s := range cfg.Seeds {
		if err := q.AddURL(s); err != nil {
			return err
		}
	}
	go func() {
		<-ctx.Done()
		cs.Close() // Run returns once the requests under way are done
	}()
	err = q.Run(c)
	emit(workerEvent{Ev: "end", Err: fmt.Sprint(err)})
	return err
}

// runWorkers starts n workers of cfg in this process, named w0, w1, …,
// their events to out and worker w's logs to logs(w). wait returns once
// every worker has ended, with each one's error (it may be called again).
func runWorkers(ctx context.Context, n int, cfg workerConfig, out io.Writer, logs func(w int) io.Writer) (wait func() []error) {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for w := range n {
		c := cfg
		c.Name = "w" + strconv.Itoa(w)
		wg.Go(func() { errs[w] = runWorker(ctx, c, out, logs(w)) })
	}
	return func() []error {
		wg.Wait()
		return errs
	}
}

// noErrors fails t for each worker that ended with an error.
func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for w, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", w, err)
		}
	}
}

// workerMain is a worker process's main: its config comes in workerEnv,
// its events go to stdout, its logs to stderr.
func workerMain() int {
	var cfg workerConfig
	if err := json.Unmarshal([]byte(os.Getenv(workerEnv)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "worker: bad config:", err)
		return 2
	}
	if err := runWorker(context.Background(), cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}
