//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// The program itself, built and run as a scheduler runs it, its output
// `> products.jsonl` each run: SIGTERM mid-crawl ends it tripped (exit 2,
// not killed) with its report; SIGKILL ends it at once. The same command
// run again collects the rest, and the file holds every product once.
func TestUsageStoppedMidCrawlAndRerunHoldsEveryProductOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) { stoppedAndRerun(t, sig) })
	}
}

func stoppedAndRerun(t *testing.T, sig syscall.Signal) {
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
	products := filepath.Join(dir, "products.jsonl")
	crawl := func(stop bool) (int, string) {
		t.Helper()
		out, err := os.Create(products) // the shell's `> products.jsonl`
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		var stderr bytes.Buffer
		cmd := exec.Command(exe, store.URL()+"/")
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, &stderr // crawl.db in dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		if stop {
			for deadline := time.Now().Add(20 * time.Second); store.Count() < 40; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("the crawl did not get going:\n%s", stderr.String())
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
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
		return cmd.ProcessState.ExitCode(), stderr.String()
	}

	code, report := crawl(true)
	switch {
	case sig == syscall.SIGTERM && (code != 2 || !strings.Contains(report, "outcome: tripped") || !strings.Contains(report, "records:")):
		t.Fatalf("exit %d, want 2 (tripped) with the report:\n%s", code, report)
	case sig == syscall.SIGKILL && code != -1:
		t.Fatalf("exit %d, want killed:\n%s", code, report)
	}
	first := lines(t, products)
	code, report = crawl(false)
	if code != 0 {
		t.Fatalf("the rerun: exit %d, want 0:\n%s", code, report)
	}
	seen := map[string]int{}
	for _, l := range lines(t, products) {
		seen[l]++
		if seen[l] == 2 {
			t.Errorf("written twice: %s", l)
		}
	}
	if len(seen) != 300 {
		t.Errorf("%d products in the file, want 300", len(seen))
	}
	t.Logf("%v after %d products written; the rerun's file holds %d", sig, len(first), len(seen))
}

// lines is the file's lines.
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
