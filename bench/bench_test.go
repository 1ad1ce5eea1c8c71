package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// TestEveryScenarioRunsTiny runs a tiny version of every scenario through
// the same code as the command, so the command cannot rot: the table has
// its shape, the JSON decodes, and the figures keep the relations the
// scenarios exist to show.
func TestEveryScenarioRunsTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real crawls for several seconds")
	}
	rep, err := bench(options{scenarios: scenarios, scale: 100, cap: 10 * time.Second, size: tinySize}, nil)
	if err != nil {
		t.Fatal(err)
	}

	byScenario := map[string]map[string]Result{}
	for _, r := range rep.Results {
		if byScenario[r.Scenario] == nil {
			byScenario[r.Scenario] = map[string]Result{}
		}
		byScenario[r.Scenario][r.Client] = r
	}
	durableSkipped := false
	for _, n := range rep.Notes {
		durableSkipped = durableSkipped || strings.HasPrefix(n, "durable: SKIPPED")
	}
	for _, s := range scenarios {
		rows := byScenario[s.name]
		want := clients
		switch s.name {
		case "broad", "broad-small":
			want = []client{plain, breakwater} // all extensions against plain Colly
		case "durable":
			if durableSkipped {
				t.Logf("durable skipped: %v", rep.Notes[len(rep.Notes)-1])
				continue
			}
			checkDurableRows(t, rows)
			continue
		}
		if len(rows) != len(want) {
			t.Fatalf("%s: %d rows, want one per client (%d)", s.name, len(rows), len(want))
		}
		for _, k := range want {
			r, ok := rows[k.String()]
			if !ok {
				t.Fatalf("%s: no row for %s", s.name, k)
			}
			if r.Requests == 0 || r.Measured == "" || r.Wall <= 0 {
				t.Errorf("%s/%s: empty figures: %+v", s.name, k, r)
			}
			if (r.Goal != nil) != k.bw() {
				t.Errorf("%s/%s: goal %+v; want one on Breakwater's rows (recommended and drop-in) only", s.name, k, r.Goal)
			}
		}
	}

	z := tinySize
	degrade := byScenario["degrade"]
	for _, k := range clients {
		if got := degrade[k.String()].Saved; got != z.degradeAfter {
			t.Errorf("degrade/%s saved %d pages; the store served %d healthy ones", k, got, z.degradeAfter)
		}
	}
	if bw, rl := degrade["breakwater"].IntoFailure, degrade["retry"].IntoFailure; bw >= rl || rl <= degrade["plain"].IntoFailure {
		t.Errorf("degrade: into the degradation breakwater %d, retry %d, plain %d; want breakwater < plain < retry",
			bw, rl, degrade["plain"].IntoFailure)
	}

	// The drop-in wiring keeps the strict bound: the failures
	// that trip, plus the requests the other slot had in flight.
	need := breaker.Standard().Settings().FailuresToTrip()
	if di, rl := degrade["drop-in"].IntoFailure, degrade["retry"].IntoFailure; di > need+parallelism-1 || di >= rl {
		t.Errorf("degrade: drop-in sent %d into the degradation (retry %d); want ≤ need + P − 1 = %d and fewer than retry",
			di, rl, need+parallelism-1)
	}

	empty := byScenario["empty"]
	if got := empty["plain"].Requests; got != z.emptyPages {
		t.Errorf("empty: plain Colly sent %d requests; want every one of the %d queued", got, z.emptyPages)
	}
	for _, k := range []client{breakwater, dropin} {
		if got := empty[k.String()].Requests; got >= z.emptyPages {
			t.Errorf("empty: %s sent %d of %d; want it to stop", k, got, z.emptyPages)
		}
	}

	for _, name := range []string{"hang", "hang-10s"} {
		for _, k := range clients {
			r := byScenario[name][k.String()]
			if r.Alone <= 0 {
				t.Errorf("%s/%s: no time without the hanging store", name, k)
			}
			if r.IntoFailure < 1 {
				t.Errorf("%s/%s: nothing sent into the hang", name, k)
			}
		}
	}

	// Every row of these carries the figures its verdict is judged on.
	for _, name := range []string{"overhead", "durable", "broad", "broad-small"} {
		for _, r := range byScenario[name] {
			if r.CPURatio == nil || r.CPURatio.N == 0 || r.CPUPerPage <= 0 || r.CPUPerPageMedian <= 0 {
				t.Errorf("%s/%s: CPU figures missing: ratio %v, per page %v, median %v", name, r.Client, r.CPURatio, r.CPUPerPage, r.CPUPerPageMedian)
			}
			// The heap per domain is measured too, but a tiny run's few
			// hundred domains may not move the live heap a whole span.
			if strings.HasPrefix(name, "broad") && (r.Domains != z.broadDomains || (r.Client == breakwater.String()) != (r.Goal != nil)) {
				t.Errorf("%s/%s: %d domains, goal %+v; want %d and a goal on Breakwater's row", name, r.Client, r.Domains, r.Goal, z.broadDomains)
			}
		}
	}

	overhead := byScenario["overhead"]
	for _, k := range clients {
		r := overhead[k.String()]
		if r.Saved != r.Pages || r.PagesPerSec <= 0 {
			t.Errorf("overhead/%s: %d of %d saved at %.0f pages/s; want every page", k, r.Saved, r.Pages, r.PagesPerSec)
		}
	}
	if bw := overhead["breakwater"]; bw.CheckpointDone != bw.Pages {
		t.Errorf("overhead: Breakwater's checkpoint holds %d URLs done of %d; want the embedded checkpoint wired", bw.CheckpointDone, bw.Pages)
	}
	if r := overhead["plain"].Ratio; r != 1 {
		t.Errorf("overhead: plain Colly's ratio to itself is %v", r)
	}

	rl := byScenario["ratelimit"]
	for _, k := range []client{breakwater, dropin} {
		if got := rl[k.String()]; got.Saved != z.ratePages {
			t.Errorf("ratelimit: %s saved %d of %d; a throttled URL must never be lost", k, got.Saved, z.ratePages)
		}
		if got, r := rl[k.String()].Share429, rl["retry"].Share429; got >= r {
			t.Errorf("ratelimit: share of 429s %s %.2f, retry %.2f; want %s's lower", k, got, r, k)
		}
		if got, r := byScenario["ratelimit-503"][k.String()].Requests, byScenario["ratelimit-503"]["retry"].Requests; got >= r {
			t.Errorf("ratelimit-503: %s sent %d, retry %d; want fewer", k, got, r)
		}
	}

	var table bytes.Buffer
	if err := writeTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	checkTable(t, table.String(), len(rep.Results))

	var js bytes.Buffer
	if err := writeJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Scale   float64 `json:"scale"`
		Results []struct {
			Scenario string    `json:"scenario"`
			Client   string    `json:"client"`
			Wall     float64   `json:"wall"`
			Goal     *Goal     `json:"goal"`
			Saved    int       `json:"saved"`
			Rounds   []float64 `json:"rounds"`
		} `json:"results"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("the JSON does not decode: %v\n%s", err, js.String())
	}
	if len(back.Results) != len(rep.Results) || back.Scale != 100 {
		t.Errorf("JSON has %d results, scale %v; want %d, 100", len(back.Results), back.Scale, len(rep.Results))
	}
	for i, r := range back.Results {
		if r.Wall <= 0 || r.Wall > 60 {
			t.Errorf("JSON result %d (%s/%s): wall %v s; want seconds, not nanoseconds", i, r.Scenario, r.Client, r.Wall)
		}
	}
}

// checkDurableRows: the anchor and the recommended wiring saved every
// page, the anchor sent its commands to Redis (at least RPUSH, LPOP, LLEN,
// GET and SET a page, the cookie's GET too), and the goal is on
// Breakwater's row only.
func checkDurableRows(t *testing.T, rows map[string]Result) {
	t.Helper()
	if len(rows) != 2 {
		t.Fatalf("durable: %d rows, want the anchor and breakwater", len(rows))
	}
	a, bw := rows[anchorClient], rows[breakwater.String()]
	for _, r := range []Result{a, bw} {
		if r.Saved != r.Pages || r.Requests == 0 || r.Measured == "" || r.Wall <= 0 {
			t.Errorf("durable/%s: %d of %d saved, %d requests: %+v", r.Client, r.Saved, r.Pages, r.Requests, r)
		}
	}
	if a.RedisCommandsPerPage == nil || *a.RedisCommandsPerPage < 6 || *a.RedisCPUPerPage <= 0 || bw.RedisCommandsPerPage == nil {
		t.Errorf("durable: the anchor sent %v commands a page to Redis (%v µs of its CPU), breakwater %v; want at least 6, and a figure for both", a.RedisCommandsPerPage, a.RedisCPUPerPage, bw.RedisCommandsPerPage)
	}
	if a.Goal != nil || bw.Goal == nil {
		t.Errorf("durable: goals %+v (anchor), %+v (breakwater); want one on breakwater's row only", a.Goal, bw.Goal)
	}
	if bw.CheckpointDone != bw.Pages {
		t.Errorf("durable: Breakwater's checkpoint holds %d done of %d", bw.CheckpointDone, bw.Pages)
	}
}

// checkTable checks the table's shape: the header, one line per result
// with a goal cell on Breakwater's lines, and the list of goals.
func checkTable(t *testing.T, table string, results int) {
	t.Helper()
	lines := strings.Split(table, "\n")
	header := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "scenario") {
			header = i
			break
		}
	}
	if header < 0 {
		t.Fatalf("no header line in the table:\n%s", table)
	}
	if got := strings.Fields(strings.ReplaceAll(lines[header], "after 1st failure", "after_1st_failure")); len(got) != len(tableColumns) {
		t.Errorf("header %q has %d columns, want %d", lines[header], len(got), len(tableColumns))
	}
	rows := lines[header+2 : header+2+results]
	for _, l := range rows {
		f := strings.Fields(l)
		if len(f) < 6 {
			t.Errorf("short table line %q", l)
			continue
		}
		if (f[1] == breakwater.String() || f[1] == dropin.String()) && !strings.Contains(l, "met:") && !strings.Contains(l, "MISSED:") {
			t.Errorf("Breakwater's line has no goal cell: %q", l)
		}
	}
	if !strings.Contains(table, "Goals, judged on") {
		t.Errorf("no list of goals under the table:\n%s", table)
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"-scale", "0.5"}, exitUsage, "-scale"},
		{[]string{"-scenarios", "degrade,nosuch"}, exitUsage, `unknown scenario "nosuch"`},
		{[]string{"-cap", "0s"}, exitUsage, "-cap"},
		{[]string{"extra"}, exitUsage, "unexpected argument"},
		{[]string{"-h"}, exitOK, "-scenarios"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.err) {
			t.Errorf("run(%q) = %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.err)
		}
	}
}

func TestSelectScenarios(t *testing.T) {
	def, err := selectScenarios("default")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range def {
		names = append(names, s.name)
	}
	if got := strings.Join(names, ","); got != "degrade,hang,empty,overhead" {
		t.Errorf("default scenarios %s; want degrade,hang,empty,overhead", got)
	}
	all, _ := selectScenarios("all")
	some, _ := selectScenarios("empty, degrade,empty")
	if len(all) != len(scenarios)-2 || len(some) != 2 || some[0].name != "empty" {
		t.Errorf("all: %d scenarios, want every one but broad and broad-small; \"empty, degrade,empty\": %v", len(all), some)
	}
}

// The overhead goal is judged on the median of the per-round ratios, not
// on the best round: one lucky round must not meet it.
func TestOverheadJudgesTheMedianRound(t *testing.T) {
	for _, c := range []struct {
		rounds, base []float64
		want         float64
	}{
		{[]float64{99, 90, 80}, []float64{100, 100, 100}, 0.90},
		{[]float64{50, 100}, []float64{100, 100}, 0.75},
		{[]float64{100}, []float64{0}, 0},
		{nil, nil, 0},
	} {
		if got := spreadOf(roundRatios(c.rounds, c.base, false)).Median; got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("median of roundRatios(%v, %v) = %v, want %v", c.rounds, c.base, got, c.want)
		}
	}
	// CPU per page is a cost: plain's over the client's, so that above 1
	// is better, as for pages/s; its range is the rounds' least and most.
	s := spreadOf(roundRatios([]float64{110, 100, 125}, []float64{100, 100, 100}, true))
	if s.N != 3 || s.Lo != 0.8 || s.Hi != 1 || s.Median < 100.0/110-1e-9 || s.Median > 100.0/110+1e-9 {
		t.Errorf("CPU spread = %+v, want median 0.909 over 0.8–1 in 3 rounds", s)
	}
}

// TestMemProfileOfTheBroadSteadyState: -memprofile writes a heap profile
// (gzipped protobuf, as go tool pprof reads) of the broad scenario once
// every domain is idle.
func TestMemProfileOfTheBroadSteadyState(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the broad scenario's idle TTL")
	}
	path := filepath.Join(t.TempDir(), "heap.pb.gz")
	o, err := parseFlags([]string{"-scenarios", "broad", "-domains", "20", "-memprofile", path}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.memprof != path {
		t.Fatalf("-memprofile %s: options say %q", path, o.memprof)
	}
	if _, err := bench(o, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("%s: %d bytes, not a gzipped profile", path, len(b))
	}
}
