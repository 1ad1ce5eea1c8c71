package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// The invariants of a program case, across its run sequence:
//
//	10. every promised product is written exactly once: never twice in a
//	    generation of the crawl (its output, over every run until the
//	    checkpoint is deleted), never as a torn record, never without the
//	    Ctx value its listing put (exactly once at the end is 12's, for
//	    the run that says complete);
//	11. a fleet healed (or healthy throughout) before the last run ends
//	    complete: the sequence's last run exits 0;
//	12. no run exits 0 with a product missing: every product the stores
//	    had promised by its end is in its generation's output;
//	13. a crash (a panic, SIGQUIT) exits 1; a run sent SIGTERM exits 2 (or
//	    0, done) with its report;
//	14. the user's OnRequest ran before its OnError, for every request.

// promisedProducts is the product URLs the stores had promised by until
// (their logs up to it).
func (cr *caseRun) promisedProducts(until time.Time) []string {
	var out []string
	for i, s := range cr.sites {
		var hits []testserver.Hit
		for _, h := range cr.hits[i] {
			if !h.Time.After(until) {
				hits = append(hits, h)
			}
		}
		for _, p := range promisedPaths(s.Site, hits) {
			if strings.HasPrefix(p, "/products/") {
				out = append(out, s.url+p)
			}
		}
	}
	return out
}

// checkProgram judges a program case.
func (cr *caseRun) checkProgram() []Violation {
	var vs []Violation
	add := func(inv int, format string, a ...any) {
		vs = append(vs, Violation{inv, fmt.Sprintf(format, a...)})
	}
	total := 0
	for _, h := range cr.hits {
		total += len(h)
	}
	if total == 0 {
		add(0, "no store received a request: the case proves nothing")
	}
	for i, r := range cr.runs {
		if r.openErr != nil {
			add(0, "run %d could not run: %v", i+1, r.openErr)
		}
		// 1. Each run ends within its bound.
		if r.hung {
			add(1, "run %d did not end within %v; torn down", i+1, cr.bound)
		}
	}
	lastOfGen := map[int]int{}
	for i, r := range cr.runs {
		pr := r.prog
		if pr == nil {
			continue
		}
		lastOfGen[pr.gen] = i
		// 13. A crash exits 1; SIGTERM exits 2 (or 0) with its report.
		if r.crashed && !r.hung && !r.quitEarly && r.exit != 1 && r.exit != -9 {
			what := "a panic"
			if pr.sig == "SIGQUIT" {
				what = "SIGQUIT"
			}
			add(13, "run %d crashed (%s) and exited %d, not 1 (error): %s", i+1, what, r.exit, pr.stderrT)
		}
		// (A SIGTERM sent before the program's run began, while the
		// process was still starting, is not judged.)
		if pr.sig == "SIGTERM" && pr.started && !r.crashed && !r.hung && ((r.exit != 0 && r.exit != 2) || !pr.reported) {
			add(13, "run %d was sent SIGTERM and exited %d (report printed: %v), want 2 (tripped) or 0 (done) with its report", i+1, r.exit, pr.reported)
		}
		// 14. The user's OnRequest before its OnError.
		var early []string
		for _, e := range pr.events {
			if strings.HasPrefix(e, "onerror-before-onrequest ") || strings.HasPrefix(e, "onerror-without-start ") {
				early = append(early, e)
			}
		}
		if len(early) > 0 {
			add(14, "run %d: the user's OnError ran %d times for a request its OnRequest had not seen: %s", i+1, len(early), sample(early))
		}
		// 12. No run exits 0 with a product missing.
		if r.exit == 0 && !r.hung {
			have := map[string]bool{}
			for _, u := range pr.written {
				have[u] = true
			}
			promised := cr.promisedProducts(r.end)
			var missing []string
			for _, u := range promised {
				if !have[u] {
					missing = append(missing, strings.TrimPrefix(u, "http://"))
				}
			}
			if len(missing) > 0 {
				sort.Strings(missing)
				add(12, "run %d ended complete (exit 0) with %d of %d promised products not in its output (generation %d): %s",
					i+1, len(missing), len(promised), pr.gen, sample(missing))
			}
		}
	}
	// 10. Written exactly once: judged on each generation's output as its
	// last run left it.
	gens := make([]int, 0, len(lastOfGen))
	for g := range lastOfGen {
		gens = append(gens, g)
	}
	sort.Ints(gens)
	for _, g := range gens {
		var runsOf []string
		for i, r := range cr.runs {
			if r.prog != nil && r.prog.gen == g {
				runsOf = append(runsOf, fmt.Sprint(i+1))
			}
		}
		pr := cr.runs[lastOfGen[g]].prog
		count := map[string]int{}
		for _, u := range pr.written {
			count[u]++
		}
		var dups []string
		for u, n := range count {
			if n > 1 {
				dups = append(dups, fmt.Sprintf("%s×%d", strings.TrimPrefix(u, "http://"), n))
			}
		}
		if len(dups) > 0 {
			sort.Strings(dups)
			add(10, "generation %d (runs %s): %d products written more than once: %s", g, strings.Join(runsOf, ","), len(dups), sample(dups))
		}
		if len(pr.torn) > 0 {
			add(10, "generation %d (runs %s): %d lines of the output are no record (a write cut short and never repaired, the next record glued to it): %s",
				g, strings.Join(runsOf, ","), len(pr.torn), sample(pr.torn))
		}
		if len(pr.noCtx) > 0 {
			add(10, "generation %d (runs %s): %d products written without the Ctx value their listing put: %s",
				g, strings.Join(runsOf, ","), len(pr.noCtx), sample(pr.noCtx))
		}
	}
	// 11. A fleet healed before the last run ends complete.
	if n := len(cr.runs); n > 0 {
		last := cr.runs[n-1]
		if last.prog != nil && !last.hung && last.openErr == nil && last.exit != 0 {
			how := "healthy throughout"
			if last.prog.healed {
				how = "healed before run 2"
			}
			add(11, "the fleet was %s and the last run (%d of %d) ended exit %d: %s", how, n, n, last.exit, firstNonEmpty(last.outcome.Reason, last.prog.stderrT))
		}
	}
	return vs
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
