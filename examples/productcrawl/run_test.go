package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// The run a new user starts first: no flags at all.
func TestDefaultRunTripsAndNamesTheTrippedDomains(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	r := runCrawl(t)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2 (tripped)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// The demo stores announce themselves in the log (JSON: stderr is not
	// a terminal here).
	scenario := map[string]string{} // host → scenario
	sc := bufio.NewScanner(strings.NewReader(r.stderr))
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			t.Fatalf("stderr line %q is not a JSON log event", sc.Text())
		}
		if ev["event"] == "demo_store" {
			scenario[strings.TrimPrefix(ev["url"].(string), "http://")] = ev["scenario"].(string)
		}
	}
	if len(scenario) != 3 {
		t.Fatalf("%d demo stores announced, want 3:\n%s", len(scenario), r.stderr)
	}

	if !strings.HasPrefix(r.stdout, "outcome: tripped (exit 2)") {
		t.Fatalf("report does not start with the outcome:\n%s", r.stdout)
	}
	finding := lineWith(r.stdout, "circuit_open:")
	rows := map[string][]string{}
	for host := range scenario {
		row := strings.Fields(lineWith(r.stdout, host+" "))
		if len(row) < 3 {
			t.Fatalf("no report row for %s:\n%s", host, r.stdout)
		}
		rows[host] = row
		healthy := strings.HasPrefix(scenario[host], "healthy")
		switch {
		case healthy && (row[1] != "closed" || strings.Contains(finding, host)):
			t.Errorf("healthy store %s: row %v, finding %q; want closed and not named", host, row, finding)
		case !healthy && (row[1] != "open" || !strings.Contains(finding, host)):
			t.Errorf("%s store %s: row %v, finding %q; want open and named as tripped", scenario[host], host, row, finding)
		}
	}
	total := strings.Fields(lineWith(r.stdout, "total "))
	head := strings.Fields(lineWith(r.stdout, "domain "))
	if len(total) != len(head)-1 { // the total has no state
		t.Fatalf("total row %v under header %v", total, head)
	}
	records := total[1]
	if got := lineWith(r.stdout, "records: "); got != "records: "+records {
		t.Errorf("records line %q, total row says %s", got, records)
	}
	f, err := os.ReadFile(filepath.Join(r.dir, "products.jsonl"))
	if err != nil {
		t.Fatalf("the default run wrote no products.jsonl in its working directory: %v", err)
	}
	if n := strings.Count(string(f), "\n"); itoa(n) != records || n < demoProducts {
		t.Errorf("products.jsonl has %d lines, the report says %s records; want equal, and at least the healthy store's %d",
			n, records, demoProducts)
	}
}

func lineWith(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// SIGINT: no new requests, those in flight finish, their products are
// written, the report is printed, the run ends as tripped.
func TestInterruptStopsSendingAndKeepsThePartial(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 300, PerPage: 300,
		Scenario: testserver.Scenario{Latency: 40 * time.Millisecond}})
	cmd, stdout, stderr := crawlCmd(t, "--report", "json", "--parallelism", "2", store.URL()+"/")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(cmd.Dir, "products.jsonl")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, _ := os.ReadFile(out); strings.Count(string(b), "\n") >= 5 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no products written within 20 s:\n%s", stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := finish(t, cmd, cmd.Wait(), stdout, stderr)
	if r.code != 2 {
		t.Fatalf("exit %d after SIGINT, want 2 (tripped: reschedule)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	sentAtExit := store.Count()
	rep := r.report(t)
	if !rep.hasFinding("interrupted", "") || rep.Outcome.State != "tripped" {
		t.Errorf("outcome %+v: want tripped with an interrupted finding", rep.Outcome)
	}
	ps := products(t, out, store)
	healthy := healthyProducts(store)
	if len(ps) != len(healthy) || rep.Outcome.Records != int64(len(ps)) {
		t.Errorf("%d lines, %d product pages served, %d records reported: every page served in flight must be written", len(ps), len(healthy), rep.Outcome.Records)
	}
	if sentAtExit >= 301 || len(ps) < 5 {
		t.Errorf("the store received %d of 301 requests, %d products written: want the crawl stopped early, the partial kept", sentAtExit, len(ps))
	}
	time.Sleep(100 * time.Millisecond)
	if store.Count() != sentAtExit {
		t.Errorf("requests went on after the process exited: %d, then %d", sentAtExit, store.Count())
	}
	if !strings.Contains(r.stderr, `"event":"interrupted"`) {
		t.Errorf("no interrupted event in the log:\n%s", r.stderr)
	}
}

func TestMaxPagesCapsTheRequestsSent(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 50, PerPage: 50})
	r := runCrawl(t, "--report", "json", "--max-pages", "10", store.URL()+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0: a capped run that collected products is complete\nstderr:\n%s", r.code, r.stderr)
	}
	ps := products(t, filepath.Join(r.dir, "products.jsonl"), store)
	if store.Count() != 10 || len(ps) != 9 || r.report(t).Outcome.Records != 9 {
		t.Errorf("%d requests, %d products: want 10 requests (a listing and 9 products), 9 products", store.Count(), len(ps))
	}
}

func TestFieldsChooseWhatGoesIntoEachLine(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 3, PerPage: 3})
	out := filepath.Join(t.TempDir(), "custom.jsonl")
	r := runCrawl(t, "--out", out, "--field", "name=div.product h1.title", "--field", "sku=div.product span.sku",
		"--require", "div.product h1.title", "--require", "div.product span.sku", store.URL()+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := regexp.MustCompile(`^\{"url":"http://[^"]+/products/sku-(\d)","name":"[^"]+","sku":"sku-(\d)","fetched_at":"[^"]+"\}$`)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), b)
	}
	for _, l := range lines {
		m := want.FindStringSubmatch(l)
		if m == nil || m[1] != m[2] || !strings.Contains(l, `"name":"`+testserver.Title(int(m[1][0]-'0'))+`"`) {
			t.Errorf("line %s: want url, name, sku (matching the URL), fetched_at, in that order", l)
		}
	}
}

// Flags may follow the start URL, and the status line can be forced on.
func TestStatusLineAndFlagsAfterTheURL(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	store := startStore(t, testserver.Config{Products: 40, PerPage: 40,
		Scenario: testserver.Scenario{Latency: 30 * time.Millisecond}})
	r := runCrawl(t, store.URL()+"/", "--status", "line", "--parallelism", "1")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	i := strings.Index(r.stdout, "outcome: complete (exit 0)")
	if i < 0 {
		t.Fatalf("no report on stdout:\n%q", r.stdout)
	}
	line := r.stdout[:i]
	if !strings.Contains(line, "pages/s") || !strings.Contains(line, " "+store.Host()+" closed") || !strings.HasSuffix(line, "\r\x1b[K") {
		t.Errorf("status output %q: want a redrawn line with pages/s and the domain's state, cleared before the report", line)
	}
}

func TestProgressEventsWhenStdoutIsNotATerminal(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 30, PerPage: 30,
		Scenario: testserver.Scenario{Latency: 25 * time.Millisecond}})
	r := runCrawl(t, "--progress", "100ms", "--parallelism", "1", "--log-format", "json", store.URL()+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	// The rate is over the interval since the previous event, so on a busy
	// machine an interval can pass with no page done (even the first, before
	// the start page is back): 0 then, and pages and a rate above 0 in some
	// event, never going back.
	n, moving, last := 0, false, 0
	for _, l := range strings.Split(r.stderr, "\n") {
		var ev struct {
			Event   string            `json:"event"`
			Pages   int               `json:"pages"`
			Rate    float64           `json:"pages_per_s"`
			Domains map[string]string `json:"domains"`
		}
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Event == "progress" {
			n++
			moving = moving || ev.Rate > 0
			if ev.Pages < last || ev.Rate < 0 || (ev.Pages > 0 && ev.Domains[store.Host()] != "closed") {
				t.Errorf("progress event %s after %d pages: want pages that never go back, a rate and the domain's state", l, last)
			}
			last = ev.Pages
		}
	}
	if !moving || last < 1 {
		t.Errorf("no progress event showed pages done at a rate above 0:\n%s", r.stderr)
	}
	if n < 2 || strings.Contains(r.stdout, "pages/s") {
		t.Errorf("%d progress events, stdout %q: want several events on stderr, no status line on stdout", n, r.stdout)
	}
}

// The crawl's own failure is an error (exit 1), never a trip: a full disk
// will be just as full on the rescheduled run.
func TestExitErrorWhenTheOutputCannotBeWritten(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 20, PerPage: 20})
	r := runCrawl(t, "--report", "json", "--out", filepath.Join(t.TempDir(), "no", "such", "dir", "p.jsonl"), store.URL()+"/")
	if r.code != 1 || store.Count() != 0 || !strings.Contains(r.stderr, "opening -out") {
		t.Errorf("unopenable -out: exit %d, %d requests sent, stderr:\n%s\nwant 1, nothing sent, a message naming -out", r.code, store.Count(), r.stderr)
	}

	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full to fill")
	}
	r = runCrawl(t, "--report", "json", "--out", "/dev/full", store.URL()+"/")
	if r.code != 1 {
		t.Fatalf("-out /dev/full: exit %d, want 1 (error)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	rep := r.report(t)
	if rep.Outcome.State != "error" || !rep.hasFinding("crawl_error", "") || !strings.Contains(rep.Outcome.Reason, "no space left") {
		t.Errorf("outcome %+v: want an error saying the disk is full", rep.Outcome)
	}
	if rep.Outcome.Records != 0 || store.Count() >= 21 {
		t.Errorf("%d records, %d requests: want nothing counted as written and the crawl stopped", rep.Outcome.Records, store.Count())
	}
}

// Each start host has its own -parallelism: two stores crawled with
// -parallelism 1 each have one request in flight, and both at once.
func TestParallelismIsPerStartHost(t *testing.T) {
	const latency = 40 * time.Millisecond
	a := startStore(t, testserver.Config{Products: 10, PerPage: 10, Scenario: testserver.Scenario{Latency: latency}})
	b := startStore(t, testserver.Config{Products: 10, PerPage: 10, Scenario: testserver.Scenario{Latency: latency}})
	r := runCrawl(t, "--parallelism", "1", a.URL()+"/", b.URL()+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	ha, hb := a.Requests(), b.Requests()
	if len(ha) != 11 || len(hb) != 11 {
		t.Fatalf("%d and %d requests, want 11 each", len(ha), len(hb))
	}
	// A store's answer is held for its latency after the request arrives,
	// so with one slot per host a store's next request arrives no sooner.
	for _, hits := range [][]testserver.Hit{ha, hb} {
		for i := 1; i < len(hits); i++ {
			if gap := hits[i].Time.Sub(hits[i-1].Time); gap < latency {
				t.Fatalf("request %d arrived %v after the one before, under the %v it was held: two in flight on one host", i+1, gap, latency)
			}
		}
	}
	overlap := false
	for _, x := range ha {
		for _, y := range hb {
			if x.Time.Before(y.Time.Add(latency)) && y.Time.Before(x.Time.Add(latency)) {
				overlap = true
			}
		}
	}
	if !overlap {
		t.Errorf("the two hosts never had a request in flight at the same time: they shared one slot")
	}
}
