package redistest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

// Backend names, as returned by Backend.
const (
	FromURL     = "REDIS_URL"    // the server REDIS_URL points at
	RedisServer = "redis-server" // a redis-server started by this test binary
	Miniredis   = "miniredis"    // the in-process fallback
)

// backend is the Redis chosen for the whole test binary.
type backend struct {
	kind string
	opts goredis.Options // copied for every client
	note string          // logged by every test that uses a fallback
	stop func()          // nil when there is nothing to stop
}

var (
	mu     sync.Mutex
	chosen *backend
	failed error // why no backend could be had; sticky, so every test says the same
)

// Main runs the package's tests and then stops the redis-server or
// miniredis that New may have started. Call it from TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop shuts down the redis-server or miniredis started by New, if any. Main
// calls it; call it yourself from a TestMain that cannot use Main. A later
// New starts a fresh one.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if chosen != nil && chosen.stop != nil {
		chosen.stop()
	}
	chosen, failed = nil, nil
}

// New returns a client connected to the test Redis (see the package
// documentation for which one) and a key prefix unique to this call. Keys
// matching prefix* are deleted and the client is closed when the test ends.
// New fails the test when no Redis at all can be had.
//
// Clients are built with ContextTimeoutEnabled, so a context deadline bounds
// every command.
func New(t testing.TB) (client *goredis.Client, prefix string) {
	t.Helper()
	b := get(t)
	client = goredis.NewClient(clientOptions(b))
	prefix = makePrefix(t.Name())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := deletePrefix(ctx, client, prefix); err != nil {
			t.Errorf("redistest: deleting the keys under %q: %v", prefix, err)
		}
		_ = client.Close()
	})
	return client, prefix
}

// Client returns one more client to the same Redis as New, closed when the
// test ends. Use it where separate connections matter, for example several
// workers racing for the same keys. It deletes no keys: pair it with New.
func Client(t testing.TB) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(clientOptions(get(t)))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Backend says which Redis the tests of this binary use: FromURL,
// RedisServer or Miniredis. It is "" before the first New.
func Backend() string {
	mu.Lock()
	defer mu.Unlock()
	if chosen == nil {
		return ""
	}
	return chosen.kind
}

func clientOptions(b *backend) *goredis.Options {
	o := b.opts
	o.ContextTimeoutEnabled = true
	o.DisableIdentity = true
	return &o
}

// get returns the binary's backend, choosing it on first use.
func get(t testing.TB) *backend {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if chosen == nil && failed == nil {
		chosen, failed = choose()
	}
	if failed != nil {
		t.Fatalf("redistest: no Redis for this test: %v", failed)
	}
	if chosen.note != "" {
		t.Log(chosen.note)
	}
	return chosen
}

func choose() (*backend, error) {
	var why []string
	if raw := os.Getenv("REDIS_URL"); raw != "" {
		b, err := fromURL(raw)
		if err == nil {
			return b, nil
		}
		why = append(why, err.Error())
	}
	b, err := startServer()
	if err == nil {
		if len(why) > 0 {
			b.note = "redistest: WARNING: " + strings.Join(why, "; ") + "; using a redis-server started by the test binary instead"
		}
		return b, nil
	}
	why = append(why, err.Error())
	if v := os.Getenv("REDISTEST_REQUIRE_REAL"); v != "" && v != "0" {
		return nil, fmt.Errorf("%s; REDISTEST_REQUIRE_REAL is set, so no miniredis fallback (set REDIS_URL or install redis-server)", strings.Join(why, "; "))
	}
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		why = append(why, "miniredis: "+err.Error())
		return nil, errors.New(strings.Join(why, "; "))
	}
	return &backend{
		kind: Miniredis,
		opts: goredis.Options{Addr: m.Addr()},
		note: "redistest: WARNING: NOT TESTING AGAINST REAL REDIS: " + strings.Join(why, "; ") +
			"; falling back to the in-process miniredis, whose Lua, TTL and timing semantics differ from Redis. Set REDIS_URL or install redis-server.",
		stop: m.Close,
	}, nil
}

func fromURL(raw string) (*backend, error) {
	opts, err := goredis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL %q is not a Redis URL: %w", raw, err)
	}
	if err := ping(opts, 3*time.Second); err != nil {
		return nil, fmt.Errorf("REDIS_URL %q does not answer PING: %w", raw, err)
	}
	return &backend{kind: FromURL, opts: *opts}, nil
}

func ping(opts *goredis.Options, within time.Duration) error {
	o := *opts
	o.MaxRetries = -1
	o.DisableIdentity = true
	o.ContextTimeoutEnabled = true
	c := goredis.NewClient(&o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return c.Ping(ctx).Err()
}

// startServer runs redis-server on a free loopback port with persistence
// off, and waits until it answers PING.
func startServer() (*backend, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("no redis-server on PATH")
	}
	var last error
	for try := 0; try < 3; try++ { // the free port may be taken before the server binds it
		b, err := startServerOnce(path)
		if err == nil {
			return b, nil
		}
		last = err
	}
	return nil, fmt.Errorf("starting %s: %w", path, last)
}

func startServerOnce(path string) (*backend, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--protected-mode", "yes",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--loglevel", "warning", "--logfile", "")
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		os.RemoveAll(dir)
	}
	opts := goredis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	deadline := time.Now().Add(5 * time.Second)
	for {
		select {
		case <-exited:
			os.RemoveAll(dir)
			return nil, fmt.Errorf("redis-server exited at start: %s", strings.TrimSpace(out.String()))
		default:
		}
		if err := ping(&opts, 200*time.Millisecond); err == nil {
			return &backend{kind: RedisServer, opts: opts, stop: stop}, nil
		} else if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server on port %d did not answer PING within 5s: %v (output: %s)", port, err, strings.TrimSpace(out.String()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// makePrefix builds "bwtest:<test name>:<random>" from characters that are
// safe in a key and not special in a SCAN MATCH pattern.
func makePrefix(name string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(name) {
		if sb.Len() >= 60 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			sb.WriteRune(r)
		default:
			sb.WriteByte('_')
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	return "bwtest:" + sb.String() + ":" + hex.EncodeToString(rnd[:])
}

// deletePrefix deletes every key matching prefix* with SCAN and UNLINK.
func deletePrefix(ctx context.Context, c *goredis.Client, prefix string) (int, error) {
	n := 0
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, prefix+"*", 1000).Result()
		if err != nil {
			return n, err
		}
		if len(keys) > 0 {
			if err := c.Unlink(ctx, keys...).Err(); err != nil {
				return n, err
			}
			n += len(keys)
		}
		if next == 0 {
			return n, nil
		}
		cursor = next
	}
}

// lockedBuffer collects a child's output; cmd.Wait writes it from another
// goroutine than the one that reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 64<<10 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
