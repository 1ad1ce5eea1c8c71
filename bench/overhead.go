package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"time"
)

// The goals: the drop-in (breaker and validator added to a program as it
// is) keeps dropinGoal of plain Colly's pages per second, the recommended
// wiring (with its durable checkpoint, which plain Colly has no part of)
// recommendedGoal, each judged on the median of the rounds' ratios.
const (
	dropinGoal      = 0.97
	recommendedGoal = 0.95
)

// runOverhead: healthy stores, every page valid. Measured: pages per second
// of each client as a ratio to plain Colly. Every client has 2 requests in
// flight per store (the baselines one LimitRule per store, Breakwater its
// pacing), so the comparison is the cost per page, not the slot layout.
// Rounds run the clients in rotating order, so that other load on the
// machine costs every client alike. Each round gives a client a ratio to
// plain Colly's pages/s in that round; the goal is judged on the median
// of those ratios, and each row shows its best round too.
func runOverhead(e *env) ([]Result, error) {
	z := e.size
	stores := make([]*cachedStore, z.overheadStores)
	for i := range stores {
		s, err := startCachedStore(z.overheadPerStore)
		if err != nil {
			return nil, fmt.Errorf("overhead: start a store: %w", err)
		}
		defer s.Close()
		stores[i] = s
	}
	urls := interleave(stores, z.overheadPerStore)
	hosts := hostsOf(stores)
	pages := len(urls)

	rows := make([]Result, len(clients))
	for i, k := range clients {
		rows[i] = Result{Scenario: "overhead", Client: k.String(), Pages: pages, IntoFailure: -1}
	}
	// A crawl of warm-up, not counted: the process's first crawl pays for
	// growing its heap and stacks, and the first round starts with plain
	// Colly, which would make every other client's first ratio look better
	// than it is.
	if _, err := crawl(crawlSpec{client: plain, urls: urls, timeout: defaultTimeout, limits: perHost, hosts: hosts,
		backoff: e.backoff(), cap: e.cap, log: e.log}); err != nil {
		return nil, fmt.Errorf("overhead, warm-up: %w", err)
	}
	for round := range z.overheadRounds {
		for j := range clients {
			i := (j + round) % len(clients)
			k := clients[i]
			before, conns0 := total(stores), totalConns(stores)
			spec := crawlSpec{client: k, urls: urls, timeout: defaultTimeout, limits: perHost, hosts: hosts,
				backoff: e.backoff(), cap: e.cap, log: e.log}
			if k == breakwater {
				spec.checkpoint = filepath.Join(e.tmp, fmt.Sprintf("overhead-%d.db", round))
			}
			cpu0, cpuOK := processCPU()
			alloc0, gc0 := allocatedBytes()
			st, err := crawl(spec)
			cpu1, _ := processCPU()
			alloc1, gc1 := allocatedBytes()
			alloc := alloc1 - alloc0
			if spec.checkpoint != "" {
				_ = os.Remove(spec.checkpoint)
			}
			if err != nil {
				return nil, fmt.Errorf("overhead, %s: %w", k, err)
			}
			pps := float64(st.saved) / st.wall.Seconds()
			r := &rows[i]
			r.Rounds = append(r.Rounds, pps)
			cpuRound := 0.0
			if cpuOK && st.saved > 0 {
				cpuRound = us((cpu1 - cpu0) / time.Duration(st.saved))
			}
			r.CPURounds = append(r.CPURounds, cpuRound)
			if pps > r.PagesPerSec {
				r.PagesPerSec, r.Saved, r.Wall, r.Requests = pps, st.saved, Duration(st.wall), total(stores)-before
				r.Retries, r.CheckpointDone = st.retries(), st.w.cpDone
			}
			if cpuOK && st.saved > 0 {
				perPage := (cpu1 - cpu0) / time.Duration(st.saved)
				if r.CPUPerPage == 0 || Duration(perPage) < r.CPUPerPage {
					r.CPUPerPage = Duration(perPage)
				}
			}
			r.Cut = r.Cut || st.cut
			e.say("%-14s %-10s round %d: %d pages in %v, %.0f pages/s over %d connections; a page: %.0f µs CPU (%.0f µs of it the garbage collector's), %d B allocated", "overhead", k, round+1, st.saved, st.wall, pps,
				totalConns(stores)-conns0, float64(cpu1-cpu0)/float64(time.Microsecond)/float64(max(st.saved, 1)), (gc1-gc0)*1e6/float64(max(st.saved, 1)), alloc/uint64(max(st.saved, 1)))
		}
	}
	for i := range rows {
		r := &rows[i]
		best := ratio(r.PagesPerSec, rows[plain].PagesPerSec)
		r.judgeRounds(e, rows[plain])
		r.Measured = fmt.Sprintf("pages/s %s, CPU/page %s plain; judged on %s (best round %.0f pages/s = %.2f×)", r.WallRatio, r.CPURatio, e.judge, r.PagesPerSec, best)
		if i == int(plain) {
			r.Measured = fmt.Sprintf("the reference: best round %.0f pages/s", r.PagesPerSec)
		}
		if r.CPUPerPage > 0 {
			r.Measured += fmt.Sprintf("; %.0f µs CPU/page", float64(r.CPUPerPage)/float64(time.Microsecond))
		}
		if r.CheckpointDone > 0 {
			r.Measured += fmt.Sprintf("; checkpoint: %d done", r.CheckpointDone)
		}
		if len(r.Rounds) > 1 {
			r.Measured += " (rounds " + roundsText(r.Rounds) + ")"
		}
	}
	for k, g := range map[client]struct {
		what string
		goal float64
	}{
		breakwater: {"breaker + validation + embedded checkpoint", recommendedGoal},
		dropin:     {"breaker + validation", dropinGoal},
	} {
		bw := &rows[k]
		bw.Goal = &Goal{
			Text:     fmt.Sprintf("%s keeps ≥ %.0f %% of plain Colly's %s", g.what, 100*g.goal, judgedAs(e.judge)),
			Met:      bw.Ratio >= g.goal && bw.Saved == pages,
			Measured: fmt.Sprintf("%.1f %% (%s: median of %d rounds)", 100*bw.Ratio, e.judge, len(bw.Rounds)),
		}
	}
	return rows, nil
}

// judgeRounds sets r's per-round ratios to base (plain Colly's row) and
// its judged Ratio: the median of the pages/s ratios, or of the CPU per
// page ones with -judge cpu.
func (r *Result) judgeRounds(e *env, base Result) {
	w := spreadOf(roundRatios(r.Rounds, base.Rounds, false))
	c := spreadOf(roundRatios(r.CPURounds, base.CPURounds, true))
	r.WallRatio, r.CPURatio = &w, &c
	r.CPUPerPageMedian = spreadOf(r.CPURounds).Median
	r.AddedCPUPerPage = medianOf(roundDiffs(r.CPURounds, base.CPURounds))
	r.Ratio = w.Median
	if e.judge == judgeCPU {
		r.Ratio = c.Median
	}
}

func total(stores []*cachedStore) int {
	n := 0
	for _, s := range stores {
		n += s.Count()
	}
	return n
}

func totalConns(stores []*cachedStore) int {
	n := 0
	for _, s := range stores {
		n += s.Conns()
	}
	return n
}

func roundsText(r []float64) string {
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = fmt.Sprintf("%.0f", v)
	}
	return strings.Join(parts, ", ")
}

// allocatedBytes is the heap bytes the process allocated so far, and the
// CPU seconds its garbage collector spent (an estimate the runtime keeps).
func allocatedBytes() (uint64, float64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Float64()
}

// judgedAs names the figure a goal is judged on, as its text says it.
func judgedAs(j judgement) string {
	if j == judgeWall {
		return "pages/s"
	}
	return "speed per page of CPU"
}
