package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// A crash is not a trip: Go exits 2 on an unrecovered panic, a fatal
// runtime error and SIGQUIT, the code productcrawl gives a run to
// reschedule without a human, so a crash loop would be rescheduled
// forever. Every kind of crash must end as an error (exit 1) with a log
// line saying it crashed, the runtime's own trace kept on stderr.
func TestACrashIsAnErrorThatSaysItCrashed(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	store := startStore(t, testserver.Config{Products: 40, PerPage: 20,
		Scenario: testserver.Scenario{Latency: 10 * time.Millisecond}})
	for _, tc := range []struct {
		crash string
		trace string // what the runtime writes on stderr
	}{
		{"panic", "panic: " + testCrashEnv + "=panic"},
		{"goroutine-panic", "panic: " + testCrashEnv + "=goroutine-panic"},
		{"fatal", "fatal error: sync: unlock of unlocked mutex"},
		{"quit", "SIGQUIT"},
	} {
		t.Run(tc.crash, func(t *testing.T) {
			cmd, stdout, stderr := crawlCmd(t, "--report", "json", "--status", "off", store.URL()+"/")
			cmd.Env = append(os.Environ(), testCrashEnv+"="+tc.crash)
			r := finish(t, cmd, cmd.Run(), stdout, stderr)
			checkCrashed(t, r, tc.trace)
		})
	}

	// SIGQUIT from outside, to the process a scheduler started, mid-crawl.
	t.Run("SIGQUIT", func(t *testing.T) {
		slow := startStore(t, testserver.Config{Products: 200, PerPage: 200,
			Scenario: testserver.Scenario{Latency: 50 * time.Millisecond}})
		cmd, stdout, stderr := crawlCmd(t, "--report", "json", "--status", "off", "--parallelism", "1", slow.URL()+"/")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for slow.Count() < 3 {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("the crawl did not get going:\n%s", stderr)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
			t.Fatal(err)
		}
		r := finish(t, cmd, cmd.Wait(), stdout, stderr)
		checkCrashed(t, r, "SIGQUIT")
	})
}

// A SIGQUIT that reaches the process a scheduler started before main has
// begun (a loaded machine starts it slowly) is a crash too: Go's runtime
// would exit 2 on it, which reads as tripped. The test holds main back
// for a second with the slow-start hook and sends the signal once that
// wait has begun (a signal sent earlier, inside the runtime's own start,
// cannot be caught by any program). Found by go run ./chaos (seed
// 10001336446621174659: SIGQUIT 82 ms in).
func TestSIGQUITBeforeMainIsACrash(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 5})
	cmd, stdout, stderr := crawlCmd(t, "--report", "json", "--status", "off", store.URL()+"/")
	started := filepath.Join(t.TempDir(), "started")
	cmd.Env = append(os.Environ(), testSlowStartEnv+"=1s", testStartedEnv+"="+started)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the crawl never reached main's slow start")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	r := finish(t, cmd, cmd.Wait(), stdout, stderr)
	checkCrashed(t, r, "SIGQUIT")
	if store.Count() != 0 {
		t.Errorf("the store received %d requests from a crawl that crashed before it began", store.Count())
	}
}

func checkCrashed(t *testing.T, r result, trace string) {
	t.Helper()
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (error: a crash needs a human)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, `"event":"crashed"`) || !strings.Contains(r.stderr, `"message":"crashed: `) {
		t.Errorf("no crashed event in the log:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, trace) {
		t.Errorf("stderr has no %q: the runtime's trace must be kept\n%s", trace, r.stderr)
	}
}
