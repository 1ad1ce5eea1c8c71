package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// deadFindings reads the dead URLs the JSON report names.
func deadFindings(t *testing.T, r result) []outcome.Dead {
	t.Helper()
	var rep struct {
		Outcome outcome.Outcome `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("stdout is not a JSON report: %v\n%s", err, r.stdout)
	}
	var out []outcome.Dead
	for _, f := range rep.Outcome.Findings {
		if f.Kind == "dead" {
			out = append(out, f.Dead...)
		}
	}
	return out
}

// lastLine is the last line the run logged.
func lastLine(r result) string {
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	return lines[len(lines)-1]
}

// Two stores, one degrading after 40 requests for good; the crawl is
// resumed again and again, each time after the cooldown. It never ends
// complete while the degrading store's products are missing: tripped
// while its URLs have attempts left, then an error once some have spent
// them, naming them by domain and cause in the report and the last log
// line, with the way to re-drive them. Once the store is back,
// --retry-dead fetches them and the crawl completes with every product.
func TestResumesNeverCompleteWhileURLsDiedOfFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	const n = 200
	healthy := startStore(t, testserver.Config{Products: 40, PerPage: 20})
	sick := startStore(t, testserver.Config{Products: n, PerPage: 20,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 40}})
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "crawl.db")
	out := filepath.Join(dir, "products.jsonl")
	args := []string{"--checkpoint", "crawl.db", "--report", "json", "--log-level", "info", "--log-format", "json",
		"--status", "off", healthy.URL() + "/", sick.URL() + "/"}
	resume := append([]string{"--resume"}, args...)

	r := runCrawlIn(t, dir, args...)
	runs := 1
	// Which parked URL each run's probes take is not fixed, so the runs
	// until one has spent its attempts vary (25 were not always enough).
	for r.code == 2 && runs < 60 {
		ageCheckpoint(t, ckpt, time.Hour) // rescheduled after the cooldown
		r = runCrawlIn(t, dir, resume...)
		runs++
		if got := len(products(t, out, healthy, sick)); r.code == 0 && got < 40+n {
			t.Fatalf("run %d: exit 0 (complete) with %d of %d products\nstdout:\n%s", runs, got, 40+n, r.stdout)
		}
	}
	sent := sick.Count()
	t.Logf("%d runs, %d requests to the degrading store, %d of its requests failing", runs, sent, sick.CountMode(testserver.Degrade))
	if r.code != 1 {
		t.Fatalf("after %d runs: exit %d, want 1 (error: URLs dead of failures)\nstdout:\n%s\nstderr:\n%s", runs, r.code, r.stdout, r.stderr)
	}
	dead := deadFindings(t, r)
	if len(dead) == 0 || dead[0].Domain != sick.Host() || dead[0].Cause != "degraded (HTTP 503)" || len(dead[0].Samples) == 0 ||
		!strings.HasPrefix(dead[0].Samples[0], sick.URL()) {
		t.Errorf("the report's dead URLs %+v: want %s's, degraded (HTTP 503), with samples", dead, sick.Host())
	}
	last := lastLine(r)
	t.Logf("last log line: %s", last)
	for _, want := range []string{`"event":"run_finished"`, sick.Host(), "degraded (HTTP 503)", "--retry-dead"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last log line does not say %q:\n%s", want, last)
		}
	}

	// As it is, a resume does not try them again: the same error.
	ageCheckpoint(t, ckpt, time.Hour)
	r = runCrawlIn(t, dir, resume...)
	if r.code != 1 {
		t.Errorf("resumed without --retry-dead: exit %d, want 1 again\n%s", r.code, r.stderr)
	}

	if err := sick.SetScenario(testserver.Scenario{}); err != nil {
		t.Fatal(err)
	}
	ageCheckpoint(t, ckpt, time.Hour)
	r = runCrawlIn(t, dir, append([]string{"--retry-dead"}, resume...)...)
	got := urls(products(t, out, healthy, sick))
	if r.code != 0 || len(got) != 40+n {
		t.Fatalf("--retry-dead once the store is back: exit %d, %d products; want 0 and all %d\nstdout:\n%s\nstderr:\n%s",
			r.code, len(got), 40+n, r.stdout, r.stderr)
	}
	for i := 1; i <= n; i++ {
		if !got[sick.ProductURL(i)] {
			t.Errorf("product %d of the degrading store missing", i)
		}
	}
}
