package redis_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	goredis "github.com/redis/go-redis/v9"
)

// calls returns every Queue method that talks to Redis, by name. claimed is
// a job with a lease, for the methods that need one; each call gets its own
// copy.
func calls(q *redis.Queue, claimed *redis.Job) map[string]func(context.Context) error {
	c := func() *redis.Job { j := *claimed; return &j }
	return map[string]func(context.Context) error{
		"enqueue":    func(ctx context.Context) error { _, err := q.Enqueue(ctx, job("x", redis.Normal)); return err },
		"claim":      func(ctx context.Context) error { _, err := q.Claim(ctx); return err },
		"ack":        func(ctx context.Context) error { return q.Ack(ctx, c()) },
		"fail":       func(ctx context.Context) error { return q.Fail(ctx, c(), errors.New("x")) },
		"park":       func(ctx context.Context) error { return q.Park(ctx, c(), time.Now()) },
		"extend":     func(ctx context.Context) error { return q.Extend(ctx, c()) },
		"reclaim":    func(ctx context.Context) error { _, err := q.Reclaim(ctx); return err },
		"dead":       func(ctx context.Context) error { _, err := q.Dead(ctx, 1); return err },
		"retry dead": func(ctx context.Context) error { return q.RetryDead(ctx, "x") },
		"stats":      func(ctx context.Context) error { _, err := q.Stats(ctx); return err },
	}
}

// leasedJob claims a real job from the test Redis, to hand to a queue whose
// Redis is gone.
func leasedJob(t *testing.T) *redis.Job {
	f := newFixture(t)
	enqueue(t, f.q, job("x", redis.Normal))
	return claim(t, f.q)
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	return addr
}

// TestRedisUnreachableFailsWithErrUnavailable points a default go-redis
// client at a closed port and runs every call at once: each must return
// ErrUnavailable with the connection error inside, none may panic or hang.
func TestRedisUnreachableFailsWithErrUnavailable(t *testing.T) {
	client := goredis.NewClient(&goredis.Options{Addr: closedPort(t)})
	defer client.Close()
	q, err := redis.NewQueue(client, "crawl")
	if err != nil {
		t.Fatal(err)
	}
	leased := leasedJob(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a hang guard, not a speed check
	defer cancel()
	began := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	results := map[string]error{}
	for name, call := range calls(q, leased) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := call(ctx)
			mu.Lock()
			results[name] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	for name, err := range results {
		if !errors.Is(err, redis.ErrUnavailable) || !errors.Is(err, errConnRefused(err)) {
			t.Errorf("%s: %v, want ErrUnavailable wrapping the connection error", name, err)
		}
	}
	if ctx.Err() != nil {
		t.Errorf("calls ran into the 20s guard")
	}
	t.Logf("%d calls at once against a closed port, default client options: %v", len(results), time.Since(began))
	t.Logf("claim's error: %v", results["claim"])
}

func TestCallTimeoutBoundsEveryCallToAnUnreachableRedis(t *testing.T) {
	client := goredis.NewClient(&goredis.Options{Addr: closedPort(t)})
	defer client.Close()
	q, err := redis.NewQueue(client, "crawl", redis.WithCallTimeout(150*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	leased := leasedJob(t)
	began := time.Now()
	for name, call := range calls(q, leased) {
		if err := call(context.Background()); !errors.Is(err, redis.ErrUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", name, err)
		}
	}
	t.Logf("10 calls one after another with a 150ms call timeout: %v", time.Since(began))
}

// errConnRefused returns the *net.OpError inside err, so the test checks
// that the cause is kept, not only the sentinel.
func errConnRefused(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op
	}
	return errors.New("no *net.OpError in the chain")
}

func TestHungRedisIsCutShortByTheCallTimeout(t *testing.T) {
	// A server that accepts connections and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conns := make(chan net.Conn, 100)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(conns)
				return
			}
			conns <- c
		}
	}()
	defer func() {
		l.Close()
		for c := range conns {
			c.Close()
		}
	}()
	client := goredis.NewClient(&goredis.Options{Addr: l.Addr().String(), ContextTimeoutEnabled: true, MaxRetries: -1})
	defer client.Close()
	q, err := redis.NewQueue(client, "crawl", redis.WithCallTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = q.Claim(context.Background())
	if !errors.Is(err, redis.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("claim against a hung Redis: %v, want ErrUnavailable and DeadlineExceeded", err)
	}
	t.Logf("claim against a hung Redis returned after %v", time.Since(began))
}

func TestCanceledContextIsNotReportedAsUnavailable(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.q.Claim(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, redis.ErrUnavailable) {
		t.Errorf("claim with a canceled context: %v, want context.Canceled only", err)
	}
}
