// Command chaos is Breakwater's generated test of its promises, in the
// spirit of property-based testing and Jepsen: it draws crawls (test
// stores that degrade, hang, throttle, block, serve consent shells or cut
// bodies; the library wired in-process as users wire it, or productcrawl
// as a process, on its checkpoint file or as 1-3 workers sharing a private
// Redis; in-process, the Colly features scrapers use (a Clone with its own
// callbacks, CacheDir, LimitRule delays, deliberate revisits, colly/queue,
// redirects across hosts, MaxDepth, MaxRequests); a fault: a cancelled or
// timed-out context, a SIGKILL, stop or
// SIGQUIT and a resume, a corrupt checkpoint, Redis restarted empty or from
// its AOF), runs each against real stores on
// 127.0.0.1, and checks invariants computed from the stores' own request
// logs, the records written, the checkpoint and the ending, never from
// Breakwater's own counters:
//
//  1. the crawl ends within a bound computed from the case;
//  2. no product is written twice (nor served whole twice in one run),
//     unless Redis came back empty and every worker ended saying the
//     crawl's state was lost;
//  3. nothing is lost silently: a product the stores linked to is written,
//     or held unfinished with its cause by the checkpoint, or (without one)
//     named by a non-complete ending;
//  4. the ending tells the truth: complete only with nothing unfinished or
//     failed, empty only with nothing written, tripped only with work left,
//     a crash an error, error not a fleet-guard misfire beside a healthy
//     store;
//  5. requests into a failing store ≤ need + P − 1 (× workers in Redis mode;
//     P = need where nothing of the user's limits a domain: the breaker's room;
//     plus the half-open probes of each cooldown the failing requests span);
//  6. no request before a Retry-After has passed;
//  7. a healthy store is crawled whole and never named tripped;
//  8. a corrupt or foreign checkpoint is refused and left unchanged;
//  9. a user's own transport carries every request.
//
// A fifth of the cases are program cases (program.go): a user's program
// (where its callbacks live: a clone-only detail collector, a Ctx chain,
// an OnRequest whose value OnError reads, a retry loop clearing cache
// files, a panic, OnXML) run as a sequence of processes, each this binary
// started again (childMain): trip then heal then rerun until done, the
// checkpoint deleted with a warm cache, a rerun after complete, SIGKILL at
// a time or mid-write, SIGQUIT, SIGTERM. They are judged by 1 and:
//
//  10. every promised product is written exactly once across the sequence
//     (never twice, torn, or without its listing's Ctx value);
//  11. a fleet healed before the last run ends complete;
//  12. no run exits 0 with a product missing;
//  13. a crash (panic, SIGQUIT) exits 1; SIGTERM exits 2 with a report;
//  14. the user's OnRequest ran before its OnError, for every request.
//
// A case in which no store received a request is itself a violation.
//
//	go run ./chaos -cases 100 -seed 1        # a run; the last line is "N cases, V violations"
//	go run ./chaos -v -replay 1234567        # one case again, by the seed a violation printed
//
// The exit code is 0 only when no case violated an invariant.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	if spec := os.Getenv(childEnv); spec != "" {
		// A program case's run: this binary as the user's program.
		os.Exit(childMain(spec))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cases := fs.Int("cases", 100, "number of cases to draw and run")
	seed := fs.Uint64("seed", 1, "the run's seed: case i's seed is derived from it")
	replay := fs.String("replay", "", "run only the cases of these seeds (comma-separated), as a violation prints them")
	verbose := fs.Bool("v", false, "print one line per case")
	keep := fs.String("keep", "", "keep each failing case's files (checkpoint, products, request logs) under this directory")
	dry := fs.Bool("dry", false, "print the cases drawn, one a line, and run none")
	pcBin := fs.String("productcrawl", "", "use this productcrawl binary instead of building ./examples/productcrawl")
	scale := fs.Float64("bound-scale", 1, "multiply every case's time bound (invariant 1) by this")
	parallel := fs.Int("parallel", 6, "cases run at once (they mostly wait on stores)")
	timeout := fs.Duration("timeout", 0, "stop drawing new cases after this long (0: run them all)")
	programs := fs.Bool("programs", false, "run only the program cases among those drawn (the seeds are the same: -cases N runs the first N program cases)")
	off := fs.String("off", "", "turn these Colly features off in every case (comma-separated: "+strings.Join(featureKeys, ",")+"), to tell which one a violation needs")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 64
	}
	var all []Case
	if *replay != "" {
		for _, s := range strings.Split(*replay, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
			if err != nil {
				fmt.Fprintf(stderr, "chaos: -replay %q: want case seeds, e.g. -replay 1234,5678\n", s)
				return 64
			}
			all = append(all, NewCase(n))
		}
	} else {
		for i := 0; len(all) < *cases; i++ {
			c := NewCase(runSeed(*seed, i))
			if *programs && c.Program == nil {
				continue
			}
			all = append(all, c)
		}
	}

	if *off != "" {
		for _, f := range strings.Split(*off, ",") {
			f = strings.TrimSpace(f)
			if !slices.Contains(featureKeys, f) {
				fmt.Fprintf(stderr, "chaos: -off %q: want some of %s\n", f, strings.Join(featureKeys, ","))
				return 64
			}
			for i := range all {
				all[i].Wiring.without(f)
			}
		}
	}
	if *dry {
		for i, c := range all {
			fmt.Fprintf(stdout, "case %d %s (bound %v)\n", i+1, c, c.Bound().Round(time.Second))
		}
		return 0
	}
	e := env{keep: *keep, scale: *scale, bin: *pcBin}
	if slicesAny(all, func(c Case) bool { return c.Program != nil }) {
		var err error
		if e.self, err = selfBinary(); err != nil {
			fmt.Fprintf(stderr, "chaos: %v\n", err)
			return 1
		}
	}
	if e.bin == "" && slicesAny(all, func(c Case) bool { return c.Wiring.Process }) {
		dir, err := os.MkdirTemp("", "chaos-bin-")
		if err != nil {
			fmt.Fprintf(stderr, "chaos: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		if e.bin, err = buildProductcrawl(dir); err != nil {
			fmt.Fprintf(stderr, "chaos: %v\n", err)
			return 1
		}
	}

	start := time.Now()
	results := make([]*Result, len(all))
	ready := make([]chan struct{}, len(all))
	for i := range ready {
		ready[i] = make(chan struct{})
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, *parallel))
	go func() {
		for i, c := range all {
			sem <- struct{}{}
			if *timeout > 0 && time.Since(start) > *timeout {
				<-sem
				close(ready[i])
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				r := runCase(c, e)
				results[i] = &r
				close(ready[i])
			}()
		}
	}()

	ran, violations, violated := 0, 0, 0
	byInv := map[int]int{}
	// The Colly features: cases that had each, and of them how
	// many violated.
	featCases, featViolated := map[string]int{}, map[string]int{}
	// The programs' shapes and run sequences: cases drawn with each, and
	// of them how many violated.
	progCases, progViolated := map[string]int{}, map[string]int{}
	for i := range all {
		<-ready[i]
		r := results[i]
		if r == nil {
			continue
		}
		ran++
		keys := r.Case.Wiring.FeatureKeys()
		if len(r.Case.Wiring.Proxies) > 0 {
			keys = append(keys, "proxies") // the proxy pools
		}
		if p := r.Case.Program; p != nil {
			for _, k := range []string{"shape=" + p.Shape.String(), "seq=" + p.Seq.String()} {
				progCases[k]++
				if len(r.Violations) > 0 {
					progViolated[k]++
				}
			}
		}
		for _, f := range keys {
			featCases[f]++
			if len(r.Violations) > 0 {
				featViolated[f]++
			}
		}
		if *verbose {
			status := "ok"
			if len(r.Violations) > 0 {
				status = fmt.Sprintf("VIOLATED %d", len(r.Violations))
			}
			fmt.Fprintf(stdout, "case %d %s %v %s | %s\n", i+1, status, r.Elapsed.Round(10*time.Millisecond), r.Case, r.Note)
		}
		if len(r.Violations) == 0 {
			continue
		}
		violated++
		if !*verbose {
			fmt.Fprintf(stdout, "case %d %s\n", i+1, r.Case)
		}
		for _, v := range r.Violations {
			violations++
			byInv[v.Inv]++
			fmt.Fprintf(stdout, "  violation %s\n", v)
		}
		if r.Stall >= 100*time.Millisecond {
			fmt.Fprintf(stdout, "  the machine stalled this process up to %v while the case ran: a short client timeout may have been reached by the stall alone\n", r.Stall.Round(time.Millisecond))
		}
		fmt.Fprintf(stdout, "  replay: %s\n", r.Case.Replay())
		if r.Dir != "" {
			fmt.Fprintf(stdout, "  kept: %s\n", r.Dir)
		}
	}
	wg.Wait()
	el := time.Since(start)
	var invs []string
	keys := make([]int, 0, len(byInv))
	for k := range byInv {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		invs = append(invs, fmt.Sprintf("inv%d=%d", k, byInv[k]))
	}
	fmt.Fprintf(stderr, "chaos: %d cases in %v (%.2f cases/s, %d at once, %d CPUs); %d cases violated (%.0f per 1000); %s\n",
		ran, el.Round(time.Second), float64(ran)/el.Seconds(), *parallel, runtime.NumCPU(), violated,
		1000*float64(violated)/float64(max(ran, 1)), strings.Join(invs, " "))
	var feats []string
	for _, f := range append(featureKeys, "proxies") {
		feats = append(feats, fmt.Sprintf("%s=%d/%d", f, featCases[f], featViolated[f]))
	}
	fmt.Fprintf(stderr, "chaos: Colly features (cases with it/violated): %s\n", strings.Join(feats, " "))
	var shapes, seqs []string
	for s := range shapeCount {
		k := "shape=" + s.String()
		shapes = append(shapes, fmt.Sprintf("%s=%d/%d", s, progCases[k], progViolated[k]))
	}
	for s := range seqCount {
		k := "seq=" + s.String()
		seqs = append(seqs, fmt.Sprintf("%s=%d/%d", s, progCases[k], progViolated[k]))
	}
	fmt.Fprintf(stderr, "chaos: program shapes (cases/violated): %s\n", strings.Join(shapes, " "))
	fmt.Fprintf(stderr, "chaos: run sequences (cases/violated): %s\n", strings.Join(seqs, " "))
	fmt.Fprintf(stdout, "%d cases, %d violations\n", ran, violations)
	if violations > 0 {
		return 1
	}
	return 0
}

func slicesAny[T any](s []T, f func(T) bool) bool {
	for _, v := range s {
		if f(v) {
			return true
		}
	}
	return false
}
