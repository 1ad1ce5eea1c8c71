package report_test

import (
	"fmt"
	"os"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
)

// Two shops: one healthy, one that failed ten times in a row after ten good
// pages and tripped its circuit. The program wrote a record per good page.
func Example() {
	clk := clock.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	b, err := breaker.New(breaker.Standard, breaker.WithClock(clk))
	if err != nil {
		fmt.Println(err)
		return
	}
	record := func(host string, c breaker.Class, n int) {
		for range n {
			if t, err := b.Allow(host); err == nil {
				b.Record(t, breaker.Outcome{Class: c, Latency: 40 * time.Millisecond})
			}
		}
	}
	record("a.example", breaker.Success, 25)
	record("b.example", breaker.Success, 10)
	record("b.example", breaker.Degraded, 10)
	record("b.example", breaker.Degraded, 5) // refused: the circuit is open

	o := outcome.Decide(35, nil, b)
	r := report.New(o, report.WithBreaker(b),
		report.WithRecords(map[string]int64{"a.example": 25, "b.example": 10}))
	r.Write(os.Stdout, report.Text)
	// Output:
	// outcome: tripped (exit 2): work left for a rescheduled run; no human needed
	//   tripped  circuit_open: circuit not closed for b.example
	// records: 35
	//
	// domain     state   records  ok  invalid  degraded  refused  unfinished  trips  median
	// a.example  closed  25       25  0        0         0        0           0      40ms
	// b.example  open    10       10  0        10        5        0           1      40ms
	// total              35       35  0        10        5        0           1      40ms
}
