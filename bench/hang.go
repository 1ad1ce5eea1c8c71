package main

import (
	"fmt"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// hangGoal is the goal for the hang scenarios: the healthy
// stores finish within this multiple of their time without the hanging one.
const hangGoal = 1.2

// dropInHang10sGoal is the goal for the drop-in wiring in hang-10s:
// the hanging store shares the LimitRule's 2 slots with every other store,
// and its first requests wait out the client's own 10 s before the
// breaker has a timeout of its own or borrowed from the fleet.
const dropInHang10sGoal = 1.5

// runHang is the hang scenario with the request timeout scaled like
// the retry loop's backoff: 10 s ÷ scale (the tiny set of the tests fixes
// its own).
func runHang(e *env) ([]Result, error) {
	timeout := e.size.hangTimeout
	if timeout == 0 {
		timeout = e.scaled(10 * time.Second)
	}
	return hang(e, "hang", timeout, e.size.hangRounds)
}

// runHang10s is the same with a real 10 s timeout, where the
// adaptive timeout has something to cut.
func runHang10s(e *env) ([]Result, error) {
	return hang(e, "hang-10s", e.size.hang10Timeout, e.size.hang10Rounds)
}

// hang runs every client over a fleet of stores whose pages are queued
// round-robin: with one store that hangs from request hangAfter+1 on
// (released after Hold, three times the timeout), and without that store.
// Measured: the time until every healthy store's pages are saved, and its
// ratio to the run without the hanging store; and when the run ends, which
// is when the client is done with the hanging store too (or the cap). With rounds > 1 the two runs alternate and
// each keeps its fastest, so that a burst of other load on the machine does
// not decide a ratio.
func hang(e *env, name string, timeout time.Duration, rounds int) ([]Result, error) {
	z := e.size
	hold := max(3*timeout, time.Second)
	var rows []Result
	done := map[string]bool{} // client → both runs got every healthy page saved
	for _, k := range clients {
		var alone, with crawlStats
		var h hangCounts
		for round := range rounds {
			a, _, err := hangRun(e, k, timeout, hold, false)
			if err != nil {
				return nil, fmt.Errorf("%s, %s without the hanging store: %w", name, k, err)
			}
			if round > 0 && with.cut {
				if faster(a, alone) {
					alone = a
				}
				continue
			}
			w, wh, err := hangRun(e, k, timeout, hold, true)
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", name, k, err)
			}
			e.say("%-14s %-10s round %d: healthy done %v, alone %v; %d requests, %d into the hang", name, k, round+1,
				w.watchDone, a.watchDone, wh.requests, wh.intoHang)
			if round == 0 || faster(a, alone) {
				alone = a
			}
			if round == 0 || faster(w, with) {
				with, h = w, wh
			}
		}
		row := Result{Scenario: name, Client: k.String(), Requests: h.requests, IntoFailure: h.intoHang,
			Saved: with.saved, Pages: z.hangStores * z.hangPages, Cut: with.cut, Retries: with.retries(),
			Alone: Duration(alone.watchDone)}
		row.BreakerState, row.Trips, row.Refused = with.breakerOf(h.host)
		switch {
		case alone.watchDone == 0:
			row.Wall = Duration(with.watchDone)
			row.Measured = fmt.Sprintf("n/a: healthy pages not all saved without the hang (%v)", secs(alone.wall))
		case with.watchDone == 0:
			row.Wall = Duration(with.wall)
			row.Ratio = ratio(float64(with.wall), float64(alone.watchDone))
			row.Measured = fmt.Sprintf("> %.1f×: not done at %v (%v alone)", row.Ratio, secs(with.wall), secs(alone.watchDone))
		default:
			row.Wall = Duration(with.watchDone)
			row.Ratio = ratio(float64(with.watchDone), float64(alone.watchDone))
			row.Measured = fmt.Sprintf("%.2f× (%v alone)", row.Ratio, secs(alone.watchDone))
		}
		row.RunEnd = Duration(with.wall)
		if !with.cut {
			row.Measured += fmt.Sprintf("; run ends at %v", secs(with.wall))
		}
		if b := breakerText(row); b != "" {
			row.Measured += "; hanging store: " + b
		}
		done[row.Client] = alone.watchDone > 0 && with.watchDone > 0
		rows = append(rows, row)
	}
	bw := find(rows, breakwater)
	bw.Goal = &Goal{
		Text:     fmt.Sprintf("healthy stores done within %.1f× their time without the hanging store", hangGoal),
		Met:      done[bw.Client] && bw.Ratio <= hangGoal,
		Measured: fmt.Sprintf("%.2f×", bw.Ratio),
	}
	// The drop-in keeps the shared LimitRule: with 10 s timeouts, a goal
	// of its own; with the scaled timeout, Breakwater's.
	di, goal, why := find(rows, dropin), hangGoal, "as the recommended wiring"
	if name == "hang-10s" {
		goal, why = dropInHang10sGoal, "shared LimitRule"
	}
	di.Goal = &Goal{
		Text:     fmt.Sprintf("healthy stores done within %.1f× their time without the hanging store (%s)", goal, why),
		Met:      done[di.Client] && di.Ratio <= goal,
		Measured: fmt.Sprintf("%.2f×", di.Ratio),
	}
	return rows, nil
}

// faster reports whether run a got the watched pages saved sooner than b;
// a run that got them all beats one that did not.
func faster(a, b crawlStats) bool {
	switch {
	case a.watchDone == 0:
		return false
	case b.watchDone == 0:
		return true
	}
	return a.watchDone < b.watchDone
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
	f, err := testserver.StartFleet(cfgs)
	if err != nil {
		return crawlStats{}, hangCounts{}, err
	}
	defer f.Close()
	healthy := hostsOf(f.Stores)
	if withHang {
		healthy = healthy[1:]
	}
	st, err := crawl(crawlSpec{client: k, urls: interleave(f.Stores, z.hangPages), timeout: timeout, limits: shared,
		backoff: e.backoff(), watch: healthy, watchPages: z.hangPages, cap: e.cap, log: e.log})
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
