package main

import (
	"fmt"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// The goals for the 429 rate limit (the first ones were 10 % and 1.5×).
const (
	maxThrottledShare = 0.01 // of the requests sent
	maxWallOverIdeal  = 1.15 // wall time ÷ (pages ÷ rate)
)

// runRateLimit: one store behind a token bucket (rate per second, burst)
// that answers 429 with Retry-After, or 503 without, when it is empty.
// Measured: pages saved, the share of throttled answers among the requests
// sent, wall time against the ideal (pages ÷ rate). The bucket runs in real
// time; only the retry loop's backoff is scaled.
func runRateLimit(e *env, name string, status int) ([]Result, error) {
	z := e.size
	sc := testserver.Scenario{Mode: testserver.RateLimit, Rate: z.rate, Burst: z.burst}
	if status != 429 {
		sc.Status = status
	}
	ideal := time.Duration(float64(z.ratePages) / z.rate * float64(time.Second))
	// A client that paces itself needs about the ideal time: give every
	// run room to show how far past it it goes.
	rows, err := singleStore(e, name, testserver.Config{Products: z.ratePages, Scenario: sc}, z.ratePages, max(e.cap, 3*ideal))
	if err != nil {
		return nil, err
	}
	for i := range rows {
		r := &rows[i]
		r.Ideal = Duration(ideal)
		r.Ratio = ratio(float64(r.Wall), float64(ideal))
		if r.Saved == r.Pages {
			r.Measured = fmt.Sprintf("%.1f %% %ds; wall %.2f× ideal (%v)", 100*r.Share429, status, r.Ratio, secs(ideal))
		} else {
			r.Measured = fmt.Sprintf("%.0f %% %ds; stopped at %v, %d unsaved", 100*r.Share429, status, secs(time.Duration(r.Wall)), r.Pages-r.Saved)
		}
		if b := retriesAndBreaker(*r); b != "—" {
			r.Measured += "; " + b
		}
	}
	for _, k := range []client{breakwater, dropin} {
		judgeRateLimit(find(rows, k), z, status)
	}
	return rows, nil
}

// judgeRateLimit sets the goal on a Breakwater row (the recommended
// wiring or the drop-in) of a rate-limit scenario.
func judgeRateLimit(bw *Result, z sizes, status int) {
	if status == 429 {
		bw.Goal = &Goal{
			Text: fmt.Sprintf("all %d saved, 429s ≤ %.0f %% of requests, wall ≤ %.2f× ideal", z.ratePages, 100*maxThrottledShare, maxWallOverIdeal),
			Met:  bw.Saved == z.ratePages && bw.Share429 <= maxThrottledShare && bw.Ratio <= maxWallOverIdeal && !bw.Cut,
			Measured: fmt.Sprintf("%d saved, %.1f %% 429s, %.2f× ideal",
				bw.Saved, 100*bw.Share429, bw.Ratio),
		}
		return
	}
	// 503 without Retry-After is a failure to the breaker: either it trips
	// (its URLs kept for the next run), or pacing keeps the failure rate below the
	// threshold and every page is saved. Both are the design; say which.
	threshold := breaker.Standard().FailureThreshold
	tripped := bw.Trips > 0 || (bw.BreakerState != "" && bw.BreakerState != circuit.Closed.String())
	paced := bw.Saved == z.ratePages && bw.Share429 < threshold
	which := "neither"
	switch {
	case tripped:
		which = fmt.Sprintf("breaker tripped (%s, %d trips) after %d requests, %d saved", bw.BreakerState, bw.Trips, bw.Requests, bw.Saved)
	case paced:
		which = fmt.Sprintf("paced: %.0f %% 503s < %.0f %%, all saved", 100*bw.Share429, 100*threshold)
	}
	bw.Goal = &Goal{
		Text:     fmt.Sprintf("trips as designed, or keeps 503s < %.0f %% and saves all %d", 100*threshold, z.ratePages),
		Met:      tripped || paced,
		Measured: which,
	}
}
