package redis_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
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
		"enqueue":    func(ctx context.Context) error { _, err := q.Enqueue(ctx, job("x")); return err },
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
	f := newFixture(t, redis.Config{})
	enqueue(t, f.q, job("x"))
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
	q, err := redis.NewQueue(client, "crawl", redis.Config{})
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
	q, err := redis.NewQueue(client, "crawl", redis.Config{CallTimeout: 150 * time.Millisecond})
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
	q, err := redis.NewQueue(client, "crawl", redis.Config{CallTimeout: 100 * time.Millisecond})
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
	f := newFixture(t, redis.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.q.Claim(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, redis.ErrUnavailable) {
		t.Errorf("claim with a canceled context: %v, want context.Canceled only", err)
	}
}

// TestRedisBusyStatesAreUnavailable serves every command with one Redis
// error reply, as a server that is loading, a read-only replica or out of
// memory would, and checks that those say ErrUnavailable while a plain
// error does not.
func TestRedisBusyStatesAreUnavailable(t *testing.T) {
	for reply, want := range map[string]bool{
		"-LOADING Redis is loading the dataset in memory":                   true,
		"-READONLY You can't write against a read only replica.":            true,
		"-OOM command not allowed when used memory > 'maxmemory'.":          true,
		"-MASTERDOWN Link with MASTER is down and replica-serve-stale-data": true,
		"-ERR unknown command 'EVALSHA'":                                    false,
	} {
		addr := replyServer(t, reply)
		client := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
		q, err := redis.NewQueue(client, "crawl", redis.Config{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = q.Claim(ctxT(t))
		if err == nil || errors.Is(err, redis.ErrUnavailable) != want {
			t.Errorf("reply %q: %v; want ErrUnavailable %v", reply, err, want)
		}
		client.Close()
	}
}

// replyServer answers every RESP command it reads with reply.
func replyServer(t *testing.T, reply string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					n, err := readCommand(r)
					if err != nil || n < 0 {
						return
					}
					if _, err := c.Write([]byte(reply + "\r\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// readCommand reads one RESP array of bulk strings and returns its length.
func readCommand(r *bufio.Reader) (int, error) {
	line, err := r.ReadString('\n')
	if err != nil || len(line) < 2 || line[0] != '*' {
		return -1, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return -1, err
	}
	for range n {
		head, err := r.ReadString('\n')
		if err != nil || len(head) < 2 || head[0] != '$' {
			return -1, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(head[1:]))
		if err != nil {
			return -1, err
		}
		if _, err := r.Discard(size + 2); err != nil {
			return -1, err
		}
	}
	return n, nil
}
