package redis_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// ownServer is a redis-server of the test's own on a free loopback port,
// which the test stops and starts again to play an outage. Its data lives
// in an append-only file synced on every write, so a restart loses
// nothing, as a production Redis configured for it would; a volatile one
// keeps nothing, so a restart loses everything.
type ownServer struct {
	t        testing.TB
	path     string
	dir      string
	port     int
	volatile bool
	cmd      *exec.Cmd
	done     chan struct{}
}

// startOwnServer starts a redis-server for the test, persisting every
// write. Without redis-server on PATH the test is skipped, or fails under
// CI (CI=true), which must never skip the outage tests silently.
func startOwnServer(t testing.TB) *ownServer {
	t.Helper()
	return startServer(t, false)
}

func startServer(t testing.TB, volatile bool) *ownServer {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		const why = "no redis-server on PATH: the outage tests need a Redis of their own to stop and start"
		if os.Getenv("CI") == "true" {
			t.Fatal(why + "; CI must run them: install redis-server (.ci/run does)")
		}
		t.Skip(why)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &ownServer{t: t, path: path, dir: t.TempDir(), port: port, volatile: volatile}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *ownServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// client returns a client that fails fast while the server is down: one
// dial per command, bounded deadlines.
func (s *ownServer) client() *goredis.Client { return s.clientFor(s.t) }

func (s *ownServer) clientFor(t testing.TB) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{
		Addr: s.addr(), ContextTimeoutEnabled: true, DisableIdentity: true,
		MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Millisecond, DialTimeout: 500 * time.Millisecond,
		ReadTimeout: time.Second, WriteTimeout: time.Second,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// portOf returns the port of a host:port address.
func portOf(t testing.TB, addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (s *ownServer) start() {
	s.t.Helper()
	persist := []string{"--appendonly", "yes", "--appendfsync", "always"}
	if s.volatile {
		persist = []string{"--appendonly", "no"}
	}
	args := append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", ""}, persist...)
	s.cmd = exec.Command(s.path, append(args, "--dir", s.dir,
		"--daemonize", "no", "--loglevel", "warning", "--logfile", filepath.Join(s.dir, "redis.log"))...)
	s.cmd.SysProcAttr = dieWithTest()
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("starting redis-server: %v", err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(s.cmd, s.done)
	c := goredis.NewClient(&goredis.Options{Addr: s.addr(), MaxRetries: -1, DisableIdentity: true})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			s.t.Fatalf("redis-server on port %d exited at start: %s", s.port, log)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server on port %d does not answer: %v", s.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server (SIGTERM, SIGKILL after 5 s) and waits until it is
// gone; connections to its port are refused from then on.
func (s *ownServer) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// kill ends the server with SIGKILL, as a crash or the OOM killer would,
// and waits until it is gone.
func (s *ownServer) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}
