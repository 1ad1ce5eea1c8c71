package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// benchRedisDB is the database the durable scenario uses on a server it
// did not start and whose URL did not name one (127.0.0.1:6379): not 0,
// where other programs' keys usually are. Its keys carry a prefix of
// their own as well, and are deleted at the end.
const benchRedisDB = 14

// redisServer is the Redis the durable scenario's anchor runs on.
type redisServer struct {
	opts  goredis.Options
	where string    // for people: "REDIS_URL", "127.0.0.1:6379", "started on port N"
	cmd   *exec.Cmd // the redis-server this run started; nil if it found one
	dir   string
}

// skipError says why a scenario could not run; the command notes it and
// goes on with the others.
type skipError struct{ why string }

func (e *skipError) Error() string { return e.why }

// findRedis picks the server: REDIS_URL if set (a skipError if it does not
// answer), else 127.0.0.1:6379 if it answers, else a redis-server started
// on a free port if one is installed, else a skipError saying so.
func findRedis(tmp string) (*redisServer, error) {
	if raw := os.Getenv("REDIS_URL"); raw != "" {
		o, err := goredis.ParseURL(raw)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		s := &redisServer{opts: *o, where: "REDIS_URL (" + o.Addr + ", db " + strconv.Itoa(o.DB) + ")"}
		if err := ping(&s.opts); err != nil {
			return nil, &skipError{fmt.Sprintf("REDIS_URL is set, but %s does not answer PING (%v)", o.Addr, err)}
		}
		return s, nil
	}
	local := &redisServer{opts: goredis.Options{Addr: "127.0.0.1:6379", DB: benchRedisDB}, where: "127.0.0.1:6379, db " + strconv.Itoa(benchRedisDB)}
	if ping(&local.opts) == nil {
		return local, nil
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, &skipError{"no Redis: REDIS_URL is not set, nothing answers on 127.0.0.1:6379, and redis-server is not installed"}
	}
	return startRedis(bin, tmp)
}

// startRedis runs bin on a free port of 127.0.0.1, without persistence,
// and waits until it answers.
func startRedis(bin, tmp string) (*redisServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("a free port for redis-server: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := filepath.Join(tmp, "redis")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--loglevel", "warning", "--logfile", "")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &redisServer{opts: goredis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}, cmd: cmd, dir: dir,
		where: "a redis-server started on port " + strconv.Itoa(port)}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := ping(&s.opts)
		if err == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			s.close()
			return nil, fmt.Errorf("%s on port %d did not answer within 5 s: %w", bin, port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// client is a new client of the server, speaking as go-redis v6 did
// (RESP2, no CLIENT SETINFO on connect).
func (s *redisServer) client() *goredis.Client {
	o := s.opts
	o.Protocol, o.DisableIdentity = 2, true
	return goredis.NewClient(&o)
}

// close stops the redis-server this run started, if any.
func (s *redisServer) close() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

func ping(o *goredis.Options) error {
	opts := *o
	opts.DialTimeout, opts.ReadTimeout, opts.MaxRetries = 300*time.Millisecond, 300*time.Millisecond, -1
	opts.Protocol, opts.DisableIdentity = 2, true
	c := goredis.NewClient(&opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

// redisUsage is what the server says it has spent so far: its CPU time
// (used_cpu_user + used_cpu_sys, the whole process) and the commands it
// has processed (any client's, this run's INFO included).
type redisUsage struct {
	cpu      time.Duration
	commands int64
}

// usage reads INFO cpu and INFO stats.
func redisUsageOf(ctx context.Context, c *goredis.Client) (redisUsage, error) {
	var u redisUsage
	for _, section := range []string{"cpu", "stats"} {
		txt, err := c.Info(ctx, section).Result()
		if err != nil {
			return u, fmt.Errorf("INFO %s: %w", section, err)
		}
		sc := bufio.NewScanner(strings.NewReader(txt))
		for sc.Scan() {
			k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
			if !ok {
				continue
			}
			switch k {
			case "used_cpu_user", "used_cpu_sys":
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return u, fmt.Errorf("INFO cpu: %s %q: %w", k, v, err)
				}
				u.cpu += time.Duration(f * float64(time.Second))
			case "total_commands_processed":
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return u, fmt.Errorf("INFO stats: %s %q: %w", k, v, err)
				}
				u.commands = n
			}
		}
	}
	return u, nil
}
