package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// redisServer is a private redis-server on a free loopback port, started
// for one case: without persistence a restart loses everything; with AOF
// (fsync always) it keeps every write.
type redisServer struct {
	port int
	dir  string // with persistence: the AOF lives here ("" = none)
	mu   sync.Mutex
	cmd  *exec.Cmd
}

// startRedis starts a private redis-server on a free port. The port is
// free when picked, not when the server binds it: another process of the
// machine may take it in between, so a server that does not come up is
// tried again on another port, three times in all.
func startRedis(persistDir string) (*redisServer, error) {
	var errs []error
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("redis: pick a port: %w", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		r := &redisServer{port: port, dir: persistDir}
		err = r.start()
		if err == nil {
			return r, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func (r *redisServer) url() string { return "redis://127.0.0.1:" + strconv.Itoa(r.port) + "/0" }

func (r *redisServer) start() error {
	args := []string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "",
		"--daemonize", "no", "--loglevel", "warning"}
	if r.dir != "" {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always", "--dir", r.dir)
	} else {
		args = append(args, "--appendonly", "no")
	}
	cmd := exec.Command("redis-server", args...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redis: start redis-server (is it on PATH?): %w", err)
	}
	r.mu.Lock()
	r.cmd = cmd
	r.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ping(r.port) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.kill()
	return fmt.Errorf("redis: redis-server on port %d did not answer PING within 5 s", r.port)
}

// kill stops the server at once (SIGKILL): its data is gone.
func (r *redisServer) kill() {
	r.mu.Lock()
	cmd := r.cmd
	r.cmd = nil
	r.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
}

func ping(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}
