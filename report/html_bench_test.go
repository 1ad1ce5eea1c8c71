package report_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
)

// bigRun is a crawl of n domains over 20 rounds of a second, one request
// per domain a round; every tenth domain fails from round 5 and trips.
func bigRun(tb testing.TB, n int) (outcome.Outcome, report.Sources) {
	tb.Helper()
	r := newTLRun(tb, report.TimelineConfig{})
	hosts := make([]string, n)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("shop%05d.example", i)
	}
	for round := range 20 {
		for i, h := range hosts {
			c := circuit.Success
			if i%10 == 0 && round >= 5 {
				c = circuit.Degraded
			}
			r.send(h, c, 1, 0)
		}
		r.clk.Advance(time.Second)
	}
	return outcome.Decide(1, r.b), report.Sources{Breaker: r.b, Timeline: r.tl, End: r.clk.Now()}
}

// A run of 10,000 domains makes a page of at most 5 MB that draws 50.
func TestHTMLOfTenThousandDomainsStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 domains")
	}
	o, src := bigRun(t, 10000)
	var buf bytes.Buffer
	start := time.Now()
	if err := report.New(o, src).Write(&buf, report.HTML); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if buf.Len() > 5<<20 {
		t.Errorf("the page of 10,000 domains is %d bytes, want at most 5 MB", buf.Len())
	}
	if n := bytes.Count(buf.Bytes(), []byte(`<svg class="timeline`)); n != report.HTMLDomains+1 {
		t.Errorf("%d timelines, want %d and the rest", n, report.HTMLDomains+1)
	}
	t.Logf("10,000 domains: %d bytes in %v", buf.Len(), took)
}

// BenchmarkHTMLTenThousandDomains builds and writes the HTML report of a
// run of 10,000 domains.
func BenchmarkHTMLTenThousandDomains(b *testing.B) {
	o, src := bigRun(b, 10000)
	var size int
	b.ResetTimer()
	for b.Loop() {
		var buf bytes.Buffer
		if err := report.New(o, src).Write(&buf, report.HTML); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size), "page-bytes")
}

// The page's size is bounded whatever the run: busy domains with every
// slice full of every kind of answer, pauses and flapping circuits.
func TestHTMLOfTheBusiestRunStaysSmall(t *testing.T) {
	r := newTLRun(t, report.TimelineConfig{})
	classes := []circuit.Class{circuit.Success, circuit.Degraded, circuit.Throttled, circuit.Gone}
	for round := range 960 {
		for i := range report.HTMLDomains + 20 {
			h := fmt.Sprintf("shop%03d.example", i)
			for k, c := range classes {
				r.hooks.OnAttempt(observe.Attempt{Domain: h, Result: circuit.Result{Class: c}, PausedUntil: r.clk.Now().Add(time.Duration(k) * 300 * time.Millisecond)})
			}
			if round%7 == 0 {
				r.hooks.OnTransition(circuit.Transition{Key: h, From: circuit.State(round % 3), To: circuit.State((round + 1) % 3), At: r.clk.Now()})
				r.hooks.OnRefused(nil, &circuit.OpenError{Key: h, State: circuit.Open})
			}
		}
		r.clk.Advance(time.Second)
	}
	var buf bytes.Buffer
	if err := report.New(outcome.Decide(1), report.Sources{Timeline: r.tl, End: r.clk.Now()}).Write(&buf, report.HTML); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 5<<20 {
		t.Errorf("the page is %d bytes, want at most 5 MB", buf.Len())
	}
	t.Logf("%d busy domains over %d slices: %d bytes", report.HTMLDomains+20, report.DefaultBuckets, buf.Len())
}
