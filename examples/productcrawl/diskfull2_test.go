//go:build linux

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// When the disk fills, the run stops at once: no request waits behind
// the ones the stop aborted. (Found by the chaos suite: each request queued
// for a domain's room waited a second for the room of an aborted one to
// lapse, so the run went on for seconds, longer than any page took.) The
// bound is 3 s for a crawl whose pages take 15 ms; it used to take 5.5 s.
func TestFullDiskStopsTheRunAtOnce(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit (util-linux) on PATH")
	}
	a := startStore(t, testserver.Config{Products: 16, PerPage: 5, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 12, Latency: 14 * time.Millisecond}})
	b := startStore(t, testserver.Config{Products: 3, PerPage: 20, Scenario: testserver.Scenario{Latency: 14 * time.Millisecond}})
	dir := t.TempDir()
	args := []string{"--report", "json", "--log-level", "warn", "--parallelism", "1", "--timeout", "492ms", "--profile", "conservative",
		"--checkpoint", filepath.Join(dir, "crawl.db"), "--out", filepath.Join(dir, "products.jsonl"), a.URL() + "/", b.URL() + "/"}
	cmd, stdout, stderr := crawlCmdIn(t, dir, args...)
	cmd.Args = append([]string{prlimit, "--fsize=225280", "--", bin}, args...)
	cmd.Path = prlimit
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		r := finish(t, cmd, err, stdout, stderr)
		if r.code != 1 || !strings.Contains(r.stdout, "file too large") {
			t.Errorf("exit %d, want 1 naming the full file\nstdout:\n%s", r.code, r.stdout)
		}
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Errorf("the run went on for more than 3 s after a full disk stopped it\nstderr:\n%s", lastLinesOf(stderr.String(), 5))
	}
}
