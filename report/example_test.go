package report_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
)

// Two shops: one healthy, one that failed ten times in a row after ten good
// pages and tripped its circuit. The program wrote a record per good page.
func Example() {
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	start := clk.Now()
	latencies := map[string][]time.Duration{}
	record := func(host string, c circuit.Class, n int) {
		for i := range n {
			if t, err := b.Allow(host); err == nil {
				lat := time.Duration(30+i) * time.Millisecond
				b.Record(t, circuit.Result{Class: c, Latency: lat})
				if c == circuit.Success {
					latencies[host] = append(latencies[host], lat)
				}
			}
		}
		clk.Advance(time.Second)
	}
	record("a.example", circuit.Success, 25)
	record("b.example", circuit.Success, 10)
	record("b.example", circuit.Degraded, 10)
	record("b.example", circuit.Degraded, 5) // refused: the circuit is open

	o := outcome.Decide(35, b)
	r := report.New(o, report.Sources{
		Breaker:   b,
		Records:   map[string]int64{"a.example": 25, "b.example": 10},
		Latencies: latencies,
		Bytes:     map[string]int64{"a.example": 25 * 4000, "b.example": 10 * 4000},
		Start:     start,
		End:       clk.Now(),
	})
	r.Write(os.Stdout, report.Text)
	// Output:
	// outcome: tripped (exit 2): work left for a rescheduled run; no human needed
	//   tripped  circuit_open: circuit not closed for b.example
	// records: 35
	// run: started 2026-11-29T12:00:00Z, took 4s: 45 requests, 11.3 a second, 140.0 kB received
	//
	// domain     state   records  valid  invalid  degraded  refused  unfinished  trips  median
	// a.example  closed  25       25     0        0         0        0           0      42ms
	// b.example  open    10       10     0        10        5        0           1      35ms
	// total              35       35     0        10        5        0           1      38ms
	//
	// columns:
	//   state       the circuit at the end: closed, open, half-open; untouched: no request sent this run
	//   records     records written: one per valid page that makes one (a product page, say)
	//   valid       pages that passed validation, listings included: it may exceed records
	//   invalid     2xx pages the validator rejected (they count against the site)
	//   degraded    timeouts, refused or reset connections, 5xx, cut bodies, DNS failures (count against the site)
	//   refused     requests the breaker held back while the circuit was open: never sent
	//   unfinished  URLs left to do for a rescheduled run (refused, failed with attempts left, not yet sent)
	//   trips       times the circuit opened
	//   median      median latency of the successful pages (total: over all of them, - when unknown)
}

// A timeline follows the breaker from the start of the crawl; the HTML
// report draws it. Here a shop trips after ten good pages and ten
// failures; the page's bands say when.
func ExampleTimeline() {
	clk := clocktest.NewFake(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	tl := report.NewTimeline(report.TimelineConfig{Clock: clk}) // the breaker's clock
	if err := tl.Observe(b); err != nil {                       // before the crawl (c.Visit)
		fmt.Println(err)
		return
	}
	for i := range 20 {
		class := circuit.Success
		if i >= 10 {
			class = circuit.Degraded
		}
		if t, err := b.Allow("shop.example"); err == nil {
			b.Record(t, circuit.Result{Class: class, Latency: 30 * time.Millisecond})
		}
		clk.Advance(100 * time.Millisecond)
	}
	clk.Advance(time.Second)

	r := report.New(outcome.Decide(10, b), report.Sources{Breaker: b, Timeline: tl, End: clk.Now()})
	var page bytes.Buffer
	if err := r.Write(&page, report.HTML); err != nil { // a file to open in a browser
		fmt.Println(err)
		return
	}
	for _, m := range regexp.MustCompile(`<rect class="band ([a-z-]+)"[^>]*><title>([^<]*)</title>`).FindAllStringSubmatch(page.String(), -1) {
		fmt.Println(m[2])
	}
	// Output:
	// closed from +0.000 s to +1.900 s
	// open from +1.900 s to +3.000 s
}
