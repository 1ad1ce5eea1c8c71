package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// orchestrate runs orchestrate.sh with PRODUCTCRAWL set to crawl, in the
// package directory, where the script is.
func orchestrate(t *testing.T, crawl string, env []string, args ...string) (int, string) {
	t.Helper()
	return orchestrateIn(t, ".", "orchestrate.sh", append(env, "PRODUCTCRAWL="+crawl), args...)
}

// orchestrateIn runs script in dir, with env added to the test's
// environment less any PRODUCTCRAWL: without one in env the script runs
// its default command.
func orchestrateIn(t *testing.T, dir, script string, env []string, args ...string) (int, string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	// Without PRODUCTCRAWL the script builds productcrawl first: on a
	// cold build cache that alone can take a minute.
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PRODUCTCRAWL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "RUN_ID=test-run"), env...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitCode(), out.String()
	}
	t.Fatalf("orchestrate.sh: %v\n%s", err, out.String())
	return 0, ""
}

func TestOrchestrateActsOnEveryExitCode(t *testing.T) {
	stub := filepath.Join(t.TempDir(), "crawl-stub")
	script := "#!/bin/sh\necho \"stub crawl got: $*\"\nexit \"$STUB_CODE\"\n"
	if err := os.WriteFile(stub, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		code   int
		action string
	}{
		{0, "test-run complete: marking the run done"},
		{2, "test-run tripped: a target degraded; rescheduling"},
		{1, "test-run error: paging on-call"},
		{3, "test-run empty: alerting"},
		{64, "test-run usage: bad flags or configuration"},
		{137, "test-run exited 137, which productcrawl never returns"},
	} {
		code, out := orchestrate(t, stub, []string{"STUB_CODE=" + strconv.Itoa(tc.code)}, "--profile", "conservative", "http://shop.example/")
		if code != tc.code {
			t.Errorf("crawl exit %d: orchestrate.sh exited %d, want the crawl's code passed on", tc.code, code)
		}
		if !strings.Contains(out, "orchestrate: "+tc.action) {
			t.Errorf("crawl exit %d: output %q, want the action %q", tc.code, out, tc.action)
		}
		if !strings.Contains(out, "stub crawl got: --profile conservative http://shop.example/") {
			t.Errorf("crawl exit %d: output %q, want the arguments passed to the crawl", tc.code, out)
		}
		if n := strings.Count(out, "orchestrate: "); n != 1 {
			t.Errorf("crawl exit %d: %d actions taken, want exactly one:\n%s", tc.code, n, out)
		}
	}
}

// The real binary, end to end: a degrading store gets the run rescheduled.
func TestOrchestrateReschedulesATrippedCrawl(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 60, PerPage: 60,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 25}})
	dir := t.TempDir()
	out := filepath.Join(dir, "p.jsonl")
	start := time.Now()
	code, text := orchestrate(t, bin, nil, "--out", out, "--checkpoint", filepath.Join(dir, "crawl.db"), "--resume",
		"--log-level", "warn", store.URL()+"/")
	if code != 2 || !strings.Contains(text, "orchestrate: test-run tripped") || !strings.Contains(text, "outcome: tripped (exit 2)") {
		t.Fatalf("exit %d after %v:\n%s\nwant the crawl's report, then the reschedule action, exit 2", code, time.Since(start), text)
	}
}

// The script as shipped, with its default command, run from the
// repository root as its comment says: each ending reaches its own action
// with its own code. (go run turns every non-zero exit into 1, so a
// default of go run would page on-call for a trip, an empty run and a
// typo alike.)
func TestOrchestrateWithItsDefaultCommandKeepsTheCrawlsCode(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	degrading := startStore(t, testserver.Config{Products: 60, PerPage: 60,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 25}})
	empty := startStore(t, testserver.Config{Products: testserver.NoProducts})
	// The script builds productcrawl under XDG_CACHE_HOME, which is also
	// where Go keeps its build cache unless GOCACHE says: keep the one
	// the test was built with.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	cache := []string{"XDG_CACHE_HOME=" + t.TempDir(), "GOCACHE=" + strings.TrimSpace(string(gocache))}
	for _, tc := range []struct {
		name   string
		code   int
		action string
		args   []string
		crash  string // testCrashEnv
	}{
		{"tripped", 2, "test-run tripped: a target degraded; rescheduling", []string{degrading.URL() + "/"}, ""},
		{"empty", 3, "test-run empty: alerting", []string{empty.URL() + "/"}, ""},
		{"usage", 64, "test-run usage: bad flags or configuration", []string{"--parallelism", "0", empty.URL() + "/"}, ""},
		{"crashed", 1, "test-run error: paging on-call", []string{empty.URL() + "/"}, "goroutine-panic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"--out", filepath.Join(dir, "p.jsonl"), "--checkpoint", filepath.Join(dir, "crawl.db"),
				"--log-level", "warn", "--status", "off"}, tc.args...)
			env := cache
			if tc.crash != "" {
				env = append(slices.Clone(cache), testCrashEnv+"="+tc.crash)
			}
			code, out := orchestrateIn(t, filepath.Join("..", ".."), filepath.Join("examples", "productcrawl", "orchestrate.sh"), env, args...)
			if code != tc.code || !strings.Contains(out, "orchestrate: "+tc.action) {
				t.Fatalf("exit %d:\n%s\nwant %d and the action %q", code, out, tc.code, tc.action)
			}
		})
	}
	if n := empty.Count(); n != 2 {
		t.Errorf("the empty store received %d requests, want 2: the listing for the empty run and the crashed one, none from the usage run", n)
	}
}
