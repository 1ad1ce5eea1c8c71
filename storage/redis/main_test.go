package redis_test

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	goredis "github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) {
	goredis.SetLogger(quiet{}) // the unreachable-Redis tests would fill the log with dial errors
	if os.Getenv(workerEnv) != "" {
		os.Exit(workerMain()) // re-run by a test as a worker process (worker_test.go)
	}
	redistest.Main(m)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// start is the fake clock's epoch: a real date, so milliseconds have the
// 13 digits they will have in production.
var start = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// newClock is a fake clock the tests move by hand, at start.
func newClock() *clocktest.Fake { return clocktest.NewFake(start) }

// fixture is one crawl's queue on the test Redis, driven by a fake clock.
type fixture struct {
	q      *redis.Queue
	client *goredis.Client
	clock  *clocktest.Fake
	ns     string
	crawl  string
	opts   redis.Config
}

// newFixture opens a crawl's queue with c, its Namespace and Clock the
// fixture's where c leaves them zero.
func newFixture(t *testing.T, c redis.Config) *fixture {
	t.Helper()
	client, prefix := redistest.New(t)
	f := &fixture{client: client, clock: newClock(), ns: prefix, crawl: "crawl-1"}
	if c.Namespace == "" {
		c.Namespace = prefix
	}
	if c.Clock == nil {
		c.Clock = f.clock
	}
	f.opts = redis.WithRand(c, rand.New(rand.NewPCG(1, 2)))
	f.q = f.queue(t, client, f.crawl)
	return f
}

// queue opens the fixture's crawl (or another) on another client.
func (f *fixture) queue(t *testing.T, client *goredis.Client, crawl string) *redis.Queue {
	t.Helper()
	q, err := redis.NewQueue(client, crawl, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func enqueue(t *testing.T, q *redis.Queue, jobs ...*redis.Job) {
	t.Helper()
	n, err := q.Enqueue(ctxT(t), jobs...)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(jobs) {
		t.Fatalf("enqueued %d of %d jobs", n, len(jobs))
	}
}

func claim(t *testing.T, q *redis.Queue) *redis.Job {
	t.Helper()
	j, err := q.Claim(ctxT(t))
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return j
}

func claimEmpty(t *testing.T, q *redis.Queue) *redis.EmptyError {
	t.Helper()
	j, err := q.Claim(ctxT(t))
	if err == nil {
		t.Fatalf("claim gave %s, want nothing ready", j)
	}
	e, ok := err.(*redis.EmptyError)
	if !ok {
		t.Fatalf("claim: %v, want *EmptyError", err)
	}
	return e
}

func stats(t *testing.T, q *redis.Queue) redis.Stats {
	t.Helper()
	s, err := q.Stats(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func job(id string) *redis.Job {
	return &redis.Job{ID: id, URL: "https://shop.example/" + id}
}
