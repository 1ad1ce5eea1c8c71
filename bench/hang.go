package main

import (
	"fmt"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// hangGoal is issues 8 and 9's goal for the hang scenarios: the healthy
// stores finish within this multiple of their time without the hanging one.
const hangGoal = 1.2

// runHang is issue 8's hang scenario with the request timeout scaled like
// the retry loop's backoff: 10 s ÷ scale.
func runHang(e *env) ([]Result, error) {
	return hang(e, "hang", e.scaled(10*time.Second))
}

// runHang10s is issue 9's: the same with a real 10 s timeout, where the
// adaptive timeout has something to cut.
func runHang10s(e *env) ([]Result, error) {
	return hang(e, "hang-10s", e.size.hang10Timeout)
}

// hang runs every client twice over a fleet of stores whose pages are
// queued round-robin: once with one store that hangs from request
// hangAfter+1 on (released after Hold, three times the timeout), once
// without that store. Measured: the time until every healthy store's pages
// are saved, and its ratio to the run without the hanging store. A run
// stops as soon as the healthy pages are all saved.
func hang(e *env, name string, timeout time.Duration) ([]Result, error) {
	z := e.size
	hold := max(3*timeout, time.Second)
	var rows []Result
	for _, k := range clients {
		alone, _, err := hangRun(e, k, timeout, hold, false)
		if err != nil {
			return nil, fmt.Errorf("%s, %s without the hanging store: %w", name, k, err)
		}
		with, h, err := hangRun(e, k, timeout, hold, true)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", name, k, err)
		}
		row := Result{Scenario: name, Client: k.String(), Requests: h.requests, IntoFailure: h.intoHang,
			Saved: with.saved, Pages: z.hangStores * z.hangPages, Cut: with.cut, Retries: with.retries(),
			Alone: Duration(alone.watchDone)}
		row.BreakerState, row.Trips, row.Refused = with.breakerOf(h.host)
		switch {
		case alone.watchDone == 0:
			row.Wall = Duration(with.watchDone)
			row.Measured = fmt.Sprintf("n/a: healthy pages not all saved without the hang (%v)", alone.wall.Round(time.Millisecond))
		case with.watchDone == 0:
			row.Wall = Duration(with.wall)
			row.Ratio = ratio(float64(with.wall), float64(alone.watchDone))
			row.Measured = fmt.Sprintf("> %.1f× (not done at %v; %v alone)", row.Ratio, secs(with.wall), secs(alone.watchDone))
		default:
			row.Wall = Duration(with.watchDone)
			row.Ratio = ratio(float64(with.watchDone), float64(alone.watchDone))
			row.Measured = fmt.Sprintf("%.2f× (%v alone)", row.Ratio, secs(alone.watchDone))
		}
		if b := breakerText(row); b != "" {
			row.Measured += "; hanging store: " + b
		}
		e.say("%-14s %-10s healthy done %v, alone %v, %d requests, %d into the hang", name, k,
			with.watchDone, alone.watchDone, h.requests, h.intoHang)
		rows = append(rows, row)
	}
	bw := find(rows, breakwater)
	bw.Goal = &Goal{
		Text:     fmt.Sprintf("healthy stores done within %.1f× their time without the hanging store", hangGoal),
		Met:      bw.Ratio > 0 && bw.Ratio <= hangGoal && !bw.Cut,
		Measured: fmt.Sprintf("%.2f×", bw.Ratio),
	}
	return rows, nil
}

// hangCounts are the stores' side of one hang run.
type hangCounts struct {
	requests int    // all stores
	intoHang int    // the hanging store's, from its first hang on
	host     string // the hanging store's
}

func hangRun(e *env, k client, timeout, hold time.Duration, withHang bool) (crawlStats, hangCounts, error) {
	z := e.size
	cfgs := make([]testserver.Config, z.hangStores)
	for i := range cfgs {
		cfgs[i] = testserver.Config{Products: z.hangPages}
	}
	if withHang {
		cfgs[0].Scenario = testserver.Scenario{Mode: testserver.Hang, After: z.hangAfter, Hold: hold}
	} else {
		cfgs = cfgs[1:]
	}
	f, err := testserver.StartFleet(cfgs...)
	if err != nil {
		return crawlStats{}, hangCounts{}, err
	}
	defer f.Close()
	healthy := hostsOf(f.Stores)
	if withHang {
		healthy = healthy[1:]
	}
	st, err := crawl(crawlSpec{client: k, urls: interleave(f.Stores, z.hangPages), timeout: timeout, limits: shared,
		backoff: e.backoff(), watch: healthy, watchPages: z.hangPages, stopOnWatch: true, cap: e.cap, log: e.log})
	if err != nil {
		return crawlStats{}, hangCounts{}, err
	}
	h := hangCounts{requests: f.Count()}
	if withHang {
		h.intoHang, h.host = f.Stores[0].SentAfterFailing(), f.Stores[0].Host()
	}
	return st, h, nil
}

// secs rounds d for a table: milliseconds under 10 s, tenths above.
func secs(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
