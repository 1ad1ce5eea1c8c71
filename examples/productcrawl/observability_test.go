package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// freeAddr returns a loopback address nothing listens on (a port just
// freed: free for a server to take, refused for a client).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// scrape fetches the metrics page, or "" while nothing answers.
func scrape(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestMetricsAreServedWhileTheCrawlRuns(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 40, Scenario: testserver.Scenario{Latency: 40 * time.Millisecond}})
	addr := freeAddr(t)
	cmd, stdout, stderr := crawlCmd(t, "--metrics", addr, "--parallelism", "1", store.URL()+"/")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	url := "http://" + addr + "/metrics"
	success := fmt.Sprintf(`breakwater_outcomes_total{class="success",domain=%q}`, store.Host())
	want := []string{
		success,
		fmt.Sprintf(`breakwater_breaker_state{domain=%q,state="closed"} 1`, store.Host()),
		fmt.Sprintf(`breakwater_request_duration_seconds_count{domain=%q}`, store.Host()),
		`breakwater_checkpoint_urls{`,
	}
	// Scrape until one page, taken while the crawl runs, has them all: the
	// outcome counter (read from the breaker's stats) and the latency
	// histogram (observed by the outcome hook right after) can be one
	// scrape apart.
	all := func(page string) bool {
		if !strings.Contains(page, success+" ") || strings.Contains(page, success+" 0") {
			return false
		}
		for _, series := range want {
			if !strings.Contains(page, series) {
				return false
			}
		}
		return true
	}
	var page string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if page = scrape(url); all(page) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := finish(t, cmd, cmd.Wait(), stdout, stderr)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	for _, series := range want {
		if !strings.Contains(page, series) {
			t.Errorf("scraped metrics lack %s\n(first lines: %.600s)", series, page)
		}
	}
	if scrape(url) != "" {
		t.Error("the metrics endpoint still answers after the crawl ended")
	}
}

func TestProfilesFileGivesADomainItsProfile(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 60, PerPage: 60, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 11}})
	dir := t.TempDir()
	yaml := fmt.Sprintf(`breaker_profiles:
  two-strikes:
    extends: standard
    consecutive_failures: 2
domains:
  %q: two-strikes
`, store.Host())
	if err := os.WriteFile(filepath.Join(dir, "profiles.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCrawlIn(t, dir, "--profiles", "profiles.yaml", "--parallelism", "1", "--report", "json", store.URL()+"/")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2 (tripped)\nstderr:\n%s", r.code, r.stderr)
	}
	d := r.report(t).domain(t, store.Host())
	if d.Profile != "two-strikes" || d.Failures.Degraded != 2 || store.SentAfterFailing() != 2 {
		t.Fatalf("domain %+v, %d requests after the failures began: want the file's two-strikes profile tripping after 2", d, store.SentAfterFailing())
	}
}

func TestBadProfilesFileIsAUsageError(t *testing.T) {
	dir := t.TempDir()
	yaml := "breaker_profiles:\n  fragile:\n    extends: standard\n    failure_threshold: 1.5\n"
	if err := os.WriteFile(filepath.Join(dir, "profiles.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCrawlIn(t, dir, "--profiles", "profiles.yaml", "http://127.0.0.1:1/")
	if r.code != 64 || !strings.Contains(r.stderr, "profiles.yaml:4") || !strings.Contains(r.stderr, "failure_threshold") {
		t.Fatalf("exit %d, stderr:\n%s\nwant 64 naming profiles.yaml:4 and failure_threshold", r.code, r.stderr)
	}
	if r := runCrawlIn(t, dir, "--metrics", "nonsense", "http://127.0.0.1:1/"); r.code != 64 || !strings.Contains(r.stderr, "-metrics") {
		t.Fatalf("bad -metrics: exit %d, stderr:\n%s\nwant 64", r.code, r.stderr)
	}
}

// The profiles file's pacing block gives a domain its least gap between
// two requests; the report shows it.
func TestProfilesFilePacesADomain(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 3, PerPage: 3})
	dir := t.TempDir()
	yaml := fmt.Sprintf("pacing:\n  %q: {min_gap_ms: 300}\n", store.Host())
	if err := os.WriteFile(filepath.Join(dir, "profiles.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCrawlIn(t, dir, "--profiles", "profiles.yaml", "--log-level", "warn", store.URL()+"/")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	// The gap is kept between departures; the store sees arrivals, each
	// late by what the machine's scheduler added (13 ms once, under a
	// loaded race run), so it allows 50 ms of that.
	hits := store.Requests()
	for i := 1; i < len(hits); i++ {
		if gap := hits[i].Time.Sub(hits[i-1].Time); gap < 250*time.Millisecond {
			t.Errorf("requests %d and %d arrived %v apart, want at least the file's 300 ms", i, i+1, gap)
		}
	}
	heads := strings.Fields(lineStarting(r.stdout, "domain "))
	row := strings.Fields(lineStarting(r.stdout, store.Host()+" "))
	if i := slices.Index(heads, "gap"); len(hits) != 4 || i < 0 || row[i] != "300ms" {
		t.Errorf("%d requests; row %v under %v: want 4 and a gap of 300ms\n%s", len(hits), row, heads, r.stdout)
	}
}
