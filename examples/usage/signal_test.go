//go:build unix

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// The program itself, built and run as a scheduler runs it: SIGTERM
// mid-crawl ends it tripped (exit 2, not killed) with its report, and the
// same command run again collects the rest, no product twice.
func TestUsageSIGTERMEndsTrippedAndARerunFinishes(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 300, PerPage: 10,
		Scenario: testserver.Scenario{Latency: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dir := t.TempDir()
	exe := filepath.Join(dir, "usage")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	crawl := func(interrupt bool) (int, string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(exe, store.URL()+"/")
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &stdout, &stderr // crawl.db in dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		if interrupt {
			for deadline := time.Now().Add(20 * time.Second); store.Count() < 10; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("the crawl did not get going:\n%s", stderr.String())
				}
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("still running after 30 s:\n%s", stderr.String())
		}
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}

	code, first, report := crawl(true)
	if code != 2 || !strings.Contains(report, "outcome: tripped") || !strings.Contains(report, "records:") {
		t.Fatalf("exit %d, want 2 (tripped) with the report:\n%s", code, report)
	}
	code, second, report := crawl(false)
	if code != 0 {
		t.Fatalf("the rerun: exit %d, want 0:\n%s", code, report)
	}
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(first+second), "\n") {
		seen[l]++
		if seen[l] == 2 {
			t.Errorf("written twice: %s", l)
		}
	}
	if len(seen) != 300 {
		t.Errorf("%d products in both runs, want 300", len(seen))
	}
	t.Logf("interrupted after %d products; the rerun wrote %d", strings.Count(first, "\n"), strings.Count(second, "\n"))
}
