package report_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
)

// twoShops records n successes of the given latencies on each host, through
// a real breaker, and returns it.
func twoShops(t *testing.T, lats map[string][]time.Duration) *breaker.Breaker {
	t.Helper()
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clocktest.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	for host, ls := range lats {
		for _, l := range ls {
			tk, err := b.Allow(host)
			if err != nil {
				t.Fatal(err)
			}
			b.Record(tk, circuit.Result{Class: circuit.Success, Latency: l})
		}
	}
	return b
}

func ms(ns ...int) []time.Duration {
	var out []time.Duration
	for _, n := range ns {
		out = append(out, time.Duration(n)*time.Millisecond)
	}
	return out
}

// The total's median is the median over every page, not the largest
// domain median: a slow domain with two pages does not make the fleet's
// median slow.
func TestReportTotalMedianIsTheMedianOverAllPages(t *testing.T) {
	lats := map[string][]time.Duration{"fast.example": ms(10, 11, 12, 13, 14), "slow.example": ms(900, 950)}
	b := twoShops(t, lats)
	r := report.New(outcome.Decide(7, b), report.Sources{Breaker: b, Latencies: lats})
	if f, _ := domainOf(r, "fast.example"); f.MedianLatency != 12*time.Millisecond {
		t.Errorf("fast.example median %v, want 12ms", f.MedianLatency)
	}
	if s, _ := domainOf(r, "slow.example"); s.MedianLatency != 950*time.Millisecond {
		t.Errorf("slow.example median %v, want 950ms (the upper middle, as the breaker's)", s.MedianLatency)
	}
	if r.Total.MedianLatency != 13*time.Millisecond || r.Total.MedianLatencyMS != 13 {
		t.Errorf("total median %v (%v ms), want 13ms: the median of all seven pages", r.Total.MedianLatency, r.Total.MedianLatencyMS)
	}
	var buf bytes.Buffer
	r.Write(&buf, report.Text)
	if row := strings.Fields(lineStarting(buf.String(), "total ")); row[len(row)-1] != "13ms" {
		t.Errorf("total row %v: want the median 13ms last\n%s", row, buf.String())
	}

	// Without every latency there is no honest total median: "-".
	r = report.New(outcome.Decide(7, b), report.Sources{Breaker: b})
	buf.Reset()
	r.Write(&buf, report.Text)
	if row := strings.Fields(lineStarting(buf.String(), "total ")); r.Total.MedianLatency != 0 || row[len(row)-1] != "-" {
		t.Errorf("total median %v, row %v: want none (a median of medians is not one)\n%s", r.Total.MedianLatency, row, buf.String())
	}
}

// The JSON report says which layout it is, when the run started and
// ended, how many requests, how fast and how many bytes; a domain no
// request went to has a state of its own; durations are rounded.
func TestReportJSONCarriesSchemaRunAndVolume(t *testing.T) {
	lats := map[string][]time.Duration{"a.example": ms(10, 20, 30)}
	b := twoShops(t, lats)
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	r := report.New(outcome.Decide(3, b), report.Sources{Breaker: b, Latencies: lats, Start: start, End: start.Add(1761*time.Millisecond + 400*time.Microsecond)},
		report.Sources{Bytes: map[string]int64{"a.example": 12345}},
		report.Sources{Records: map[string]int64{"a.example": 3, "old.example": 2}})
	var buf bytes.Buffer
	if err := r.Write(&buf, report.JSON); err != nil {
		t.Fatal(err)
	}
	js := buf.String()
	for _, want := range []string{`"schema_version": 2`, `"start": "2026-12-01T08:00:00Z"`, `"end": "2026-12-01T08:00:01.761Z"`,
		`"took_s": 1.761,`, `"requests": 3,`, `"pages_per_s": 1.7,`, `"bytes": 12345,`, `"state": "untouched"`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON report lacks %s:\n%s", want, js)
		}
	}
	var back map[string]any
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"start", "end"} {
		if _, err := time.Parse(time.RFC3339, back[k].(string)); err != nil {
			t.Errorf("%s %v: not RFC 3339: %v", k, back[k], err)
		}
	}
	if _, ok := back["total"].(map[string]any)["state"]; ok {
		t.Errorf("the total has a state: %v", back["total"])
	}
	// The text says it too.
	buf.Reset()
	r.Write(&buf, report.Text)
	if !strings.Contains(buf.String(), "run: started 2026-12-01T08:00:00Z, took 1.8s: 3 requests, 1.7 a second, 12.3 kB received") {
		t.Errorf("no run line:\n%s", buf.String())
	}
	if row := strings.Fields(lineStarting(buf.String(), "old.example ")); len(row) < 2 || row[1] != "untouched" {
		t.Errorf("old.example row %v: want state untouched", row)
	}
}

// A domain's unfinished counts what the checkpoint holds for it, pending
// URLs never sent included, not only what the breaker refused; the two
// are not added (the checkpoint holds the breaker's too).
func TestReportUnfinishedCountsTheStoresPendingURLs(t *testing.T) {
	b := twoShops(t, map[string][]time.Duration{"a.example": ms(10)})
	r := report.New(outcome.Decide(1, b), report.Sources{Breaker: b},
		report.Sources{Unfinished: map[string]int{"A.example": 9, "b.example": 4}})
	a, _ := domainOf(r, "a.example")
	bb, _ := domainOf(r, "b.example")
	if a.Unfinished != 9 || bb.Unfinished != 4 || bb.State != report.Untouched || r.Total.Unfinished != 13 {
		t.Errorf("unfinished a %d, b %d (%s), total %d: want 9, 4 (untouched), 13", a.Unfinished, bb.Unfinished, bb.State, r.Total.Unfinished)
	}
}

// Every column the text shows has one line in the legend under the
// table, saying what it counts; "valid" says why it may exceed records.
func TestReportTextLegendExplainsEveryColumnShown(t *testing.T) {
	b := twoShops(t, map[string][]time.Duration{"a.example": ms(10)})
	r := report.New(outcome.Decide(1, b), report.Sources{Breaker: b}, report.Sources{Robots: map[string]int64{"a.example": 2}})
	var buf bytes.Buffer
	r.Write(&buf, report.Text)
	text := buf.String()
	heads := strings.Fields(lineStarting(text, "domain "))
	legend := text[strings.Index(text, "\ncolumns:\n"):]
	for _, h := range heads[1:] {
		if lineStarting(legend, "  "+h+" ") == "" {
			t.Errorf("column %q has no legend line:\n%s", h, text)
		}
	}
	if !slices.Contains(heads, "robots") || !strings.Contains(lineStarting(legend, "  valid "), "may exceed records") {
		t.Errorf("want a robots column and valid explained against records:\n%s", text)
	}
	row := strings.Fields(lineStarting(text, "a.example "))
	if i := slices.Index(heads, "robots"); row[i] != "2" || row[slices.Index(heads, "unfinished")] != "0" || row[slices.Index(heads, "degraded")] != "0" {
		t.Errorf("row %v under %v: want robots 2, nothing unfinished or degraded", row, heads)
	}
}
