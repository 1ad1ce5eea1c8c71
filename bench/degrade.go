package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// singleStore runs every client against a store of its own, started from
// cfg for each run, with N product pages queued up front, and returns one
// row per client with the store's counts.
func singleStore(e *env, name string, cfg testserver.Config, n int, cap time.Duration) ([]Result, error) {
	var rows []Result
	for _, k := range clients {
		s, err := testserver.Start(cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: start the store: %w", name, err)
		}
		st, err := crawl(crawlSpec{client: k, urls: productURLs(s, n), timeout: defaultTimeout, limits: shared,
			backoff: e.backoff(), cap: cap, log: e.log})
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("%s, %s: %w", name, k, err)
		}
		row := Result{Scenario: name, Client: k.String(), Requests: s.Count(), IntoFailure: s.SentAfterFailing(),
			Saved: st.saved, Pages: n, Wall: Duration(st.wall), Cut: st.cut, Retries: st.retries()}
		row.BreakerState, row.Trips, row.Refused = st.breakerOf(s.Host())
		row.Share429 = ratio(float64(s.CountMode(testserver.RateLimit)), float64(s.Count()))
		s.Close()
		e.say("%-14s %-10s %5d requests, %4d into failure, %3d/%d saved, %v", name, k, row.Requests, row.IntoFailure, row.Saved, n, st.wall)
		rows = append(rows, row)
	}
	return rows, nil
}

// runDegrade: one store that answers 503 from request degradeAfter+1 on.
// Measured: requests the store receives after it starts failing, pages
// saved, wall time.
func runDegrade(e *env) ([]Result, error) {
	n, after := e.size.degradePages, e.size.degradeAfter
	cfg := testserver.Config{Products: n, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: after}}
	rows, err := singleStore(e, "degrade", cfg, n, e.cap)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].Measured = retriesAndBreaker(rows[i])
	}
	rl := find(rows, retry)
	need := breaker.Standard().Settings().FailuresToTrip()
	for _, g := range []struct {
		k     client
		bound int
		why   string
	}{
		{breakwater, need + parallelism, "window × threshold + parallelism"},
		{dropin, need + parallelism - 1, "need + P − 1"},
	} {
		r := find(rows, g.k)
		fewer := ratio(float64(rl.IntoFailure), float64(max(r.IntoFailure, 1)))
		r.Ratio = fewer
		r.Goal = &Goal{
			Text:     fmt.Sprintf("≤ %d into the degradation (%s), ≥ 10× fewer than retry", g.bound, g.why),
			Met:      r.IntoFailure <= g.bound && fewer >= 10,
			Measured: fmt.Sprintf("%d; %.0f× fewer", r.IntoFailure, fewer),
		}
	}
	return rows, nil
}

// runEmpty: one store that answers every page with a 200 consent shell.
// Measured: requests sent before the client stops, or "never stops".
func runEmpty(e *env) ([]Result, error) {
	n := e.size.emptyPages
	cfg := testserver.Config{Products: n, Scenario: testserver.Scenario{Mode: testserver.Empty}}
	rows, err := singleStore(e, "empty", cfg, n, e.cap)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		r := &rows[i]
		r.IntoFailure = -1 // every answer is a shell: the same as Requests
		if r.Requests >= n {
			r.Measured = fmt.Sprintf("never stops: all %d sent", n)
		} else {
			r.Measured = fmt.Sprintf("stops after %d", r.Requests)
		}
		if b := breakerText(*r); b != "" {
			r.Measured += "; " + b
		}
	}
	bound := breaker.Standard().WindowSize + parallelism
	for _, k := range []client{breakwater, dropin} {
		r := find(rows, k)
		r.Ratio = ratio(float64(r.Requests), float64(bound))
		r.Goal = &Goal{
			Text:     fmt.Sprintf("stops within the profile's bound: ≤ %d sent (window %d + parallelism)", bound, breaker.Standard().WindowSize),
			Met:      r.Requests <= bound,
			Measured: fmt.Sprintf("%d sent", r.Requests),
		}
	}
	return rows, nil
}

// find returns the row of client k.
func find(rows []Result, k client) *Result {
	for i := range rows {
		if rows[i].Client == k.String() {
			return &rows[i]
		}
	}
	panic("bench: no row for " + k.String()) // every scenario runs every client
}

// retriesAndBreaker is the measured text of a row: retries issued and the
// breaker's state.
func retriesAndBreaker(r Result) string {
	var parts []string
	if r.Client != plain.String() {
		parts = append(parts, fmt.Sprintf("%d retries", r.Retries))
	}
	if b := breakerText(r); b != "" {
		parts = append(parts, b)
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

// breakerText is a breaker's state at the end of a run, "" for none.
func breakerText(r Result) string {
	switch {
	case r.BreakerState == "":
		return ""
	case r.Refused > 0:
		return fmt.Sprintf("%s, %d refused", r.BreakerState, r.Refused)
	}
	return r.BreakerState
}
