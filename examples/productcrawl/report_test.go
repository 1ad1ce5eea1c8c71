package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// A run resumed while its tripped domain cools down sends it nothing,
// but the URLs the checkpoint holds for it are still to do: the report's
// unfinished says so, not 0.
func TestReportUnfinishedCountsTheCheckpointsURLs(t *testing.T) {
	const n = 60
	sick := startStore(t, testserver.Config{Products: n, PerPage: n,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 20}})
	dir := t.TempDir()
	args := []string{"--resume", "--report", "json", "--log-level", "warn", sick.URL() + "/"}
	r := runCrawlIn(t, dir, args...)
	first := r.report(t).domain(t, sick.Host())
	if r.code != 2 || first.Unfinished == 0 {
		t.Fatalf("first run: exit %d, unfinished %d: want a trip with URLs unfinished\n%s", r.code, first.Unfinished, r.stderr)
	}
	r = runCrawlIn(t, dir, args...)
	again := r.report(t).domain(t, sick.Host())
	if r.code != 2 || again.Unfinished != first.Unfinished || again.Requests != 0 {
		t.Fatalf("resumed within the cooldown: exit %d, unfinished %d after %d requests; want 2 and the first run's %d unfinished, none sent",
			r.code, again.Unfinished, again.Requests, first.Unfinished)
	}
}

// The text report names one thing per column and says which under the
// table; the JSON one carries its schema version, the run's start and
// end, requests, pages/s and bytes; durations are rounded in both and in
// the run_finished event.
func TestReportSaysWhatEachColumnMeansAndTheRunsVolume(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 12, PerPage: 5})
	r := runCrawl(t, "--log-format", "json", store.URL()+"/")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	text := r.stdout
	heads := strings.Fields(lineStarting(text, "domain "))
	if len(heads) == 0 || !strings.Contains(text, "\ncolumns:\n") || strings.Contains(text, " @ ") {
		t.Fatalf("want a table, a legend and no \"2 @ -\":\n%s", text)
	}
	for _, h := range heads[1:] {
		if lineStarting(text, "  "+h+" ") == "" {
			t.Errorf("column %s is not in the legend:\n%s", h, text)
		}
	}
	row := strings.Fields(lineStarting(text, store.Host()+" "))
	if row[1] != "closed" || row[2] != "12" || row[3] != "15" {
		t.Errorf("row %v under %v: want closed, 12 records, 15 valid pages (3 listings)", row, heads)
	}
	if !strings.Contains(lineStarting(text, "  valid "), "may exceed records") {
		t.Errorf("the legend does not say why valid exceeds records:\n%s", text)
	}
	if !regexp.MustCompile(`(?m)^run: started \S+, took \S+: 15 requests, [0-9.]+ a second, [0-9.]+ kB received$`).MatchString(text) {
		t.Errorf("no run line:\n%s", text)
	}
	rounded := regexp.MustCompile(`"took_s":\d+(\.\d{1,3})?[,}]`)
	if !rounded.MatchString(r.stderr) {
		t.Errorf("run_finished's took_s is not rounded to the millisecond:\n%s", lineWith(r.stderr, "run_finished"))
	}

	r = runCrawl(t, "--report", "json", "--log-level", "warn", store.URL()+"/")
	var raw map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if raw["schema_version"] != 2.0 || raw["requests"] != 15.0 || raw["bytes"].(float64) <= 0 || raw["pages_per_s"].(float64) <= 0 {
		t.Errorf("JSON report: schema_version %v, requests %v, bytes %v, pages_per_s %v; want 2, 15 and the volume",
			raw["schema_version"], raw["requests"], raw["bytes"], raw["pages_per_s"])
	}
	start, err1 := time.Parse(time.RFC3339, raw["start"].(string))
	end, err2 := time.Parse(time.RFC3339, raw["end"].(string))
	if err1 != nil || err2 != nil || end.Before(start) || time.Since(start) > time.Minute {
		t.Errorf("start %v end %v: want RFC 3339 times of this run (%v, %v)", raw["start"], raw["end"], err1, err2)
	}
	if !rounded.MatchString(strings.ReplaceAll(r.stdout, " ", "")) {
		t.Errorf("took_s not rounded:\n%s", r.stdout)
	}
}

func lineStarting(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
