package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Exit codes: Breakwater's (0 ok, 1 error, 64 usage), so a usage error is not Go flag's 2.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 64
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command's settings once flags are read.
type options struct {
	scenarios []scenario
	scale     float64
	cap       time.Duration
	size      sizes
	verbose   bool
	json      bool
	cpuprof   string
	blockprof string
	memprof   string
	judge     judgement
}

// run is the whole command; it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return exitUsage
	}
	if o.cpuprof != "" {
		f, err := os.Create(o.cpuprof)
		if err != nil {
			fmt.Fprintf(stderr, "bench: -cpuprofile: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "bench: -cpuprofile: %v\n", err)
			return exitError
		}
		defer pprof.StopCPUProfile()
	}
	if o.blockprof != "" {
		// Where the crawl waits rather than works: mutexes and blocking.
		runtime.SetBlockProfileRate(int(time.Microsecond))
		runtime.SetMutexProfileFraction(1)
		defer func() {
			for _, name := range []string{"block", "mutex"} {
				f, err := os.Create(o.blockprof + "." + name)
				if err != nil {
					fmt.Fprintf(stderr, "bench: -blockprofile: %v\n", err)
					return
				}
				_ = pprof.Lookup(name).WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	if o.memprof != "" {
		runtime.MemProfileRate = 4096 // fine enough to tell a few bytes a domain apart
	}
	rep, err := bench(o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return exitError
	}
	if o.json {
		err = writeJSON(stdout, rep)
	} else {
		err = writeTable(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return exitError
	}
	return exitOK
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scen := fs.String("scenarios", "default", "`which`: default (degrade, hang, empty, overhead), all (adds ratelimit, ratelimit-503, hang-10s, durable: ~5 more minutes; not broad or broad-small, which run only by name), or names, comma-separated: "+scenarioNames())
	scale := fs.Float64("scale", 100, "time `divisor` for the retry loop's backoff (1 s … 16 s) and the hang scenario's request timeout (10 s); 1 = real time")
	capD := fs.Duration("cap", time.Minute, "longest `time` one client's run may take; a run that reaches it is stopped and marked cut")
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	verbose := fs.Bool("v", false, "print a line per run and Breakwater's events on stderr")
	domains := fs.Int("domains", 0, "`how many` domains the broad scenarios crawl, 2 pages each; 0 for each one's default (broad 50,000, broad-small 1,000,000)")
	broadRounds := fs.Int("broad-rounds", 3, "`how many` rounds of the broad scenarios, plain Colly and Breakwater taking turns to go first")
	cpuprof := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `file` (go tool pprof reads it)")
	blockprof := fs.String("blockprofile", "", "write where the run waited to `prefix`.block and contended locks to prefix.mutex (go tool pprof reads them)")
	judge := fs.String("judge", string(judgeCPU), "`figure` the overhead and broad goals are judged on (durable's is always CPU), each round against plain Colly's in the same round: wall (pages/s) or cpu (the process's CPU time per page)")
	memprof := fs.String("memprofile", "", "write a heap profile of a broad scenario's steady state (every domain idle, the checkpoint's store let go) to `file`, and one at the active point (every domain whole, the checkpoint let go: heap_per_domain) to file.active; with both broad scenarios, the last one's")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./bench [flags]\n\nRuns plain Colly, Colly with a retry loop, Colly with gobreaker, Colly with\nBreakwater as recommended, and the retry client with Breakwater dropped in\nthrough the same scenarios on local test stores, and prints one table.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	switch {
	case fs.NArg() > 0:
		return options{}, fmt.Errorf("unexpected argument %q: the command takes flags only (-h lists them)", fs.Arg(0))
	case *scale < 1:
		return options{}, fmt.Errorf("-scale %v: must be at least 1 (1 is real time, 100 runs a hundred times faster)", *scale)
	case *capD <= 0:
		return options{}, fmt.Errorf("-cap %v: must be above 0", *capD)
	case *domains < 0:
		return options{}, fmt.Errorf("-domains %d: must be at least 1 (0 for each scenario's default)", *domains)
	case *broadRounds < 1:
		return options{}, fmt.Errorf("-broad-rounds %d: must be at least 1", *broadRounds)
	case judgement(*judge) != judgeWall && judgement(*judge) != judgeCPU:
		return options{}, fmt.Errorf("-judge %q: must be wall or cpu", *judge)
	}
	sel, err := selectScenarios(*scen)
	if err != nil {
		return options{}, fmt.Errorf("-scenarios: %w", err)
	}
	size := fullSize
	size.broadDomains, size.broadRounds = *domains, *broadRounds
	return options{scenarios: sel, scale: *scale, cap: *capD, size: size, verbose: *verbose, json: *asJSON, cpuprof: *cpuprof, blockprof: *blockprof, memprof: *memprof, judge: judgement(*judge)}, nil
}

// bench runs the scenarios and returns what they measured. With
// o.verbose, progress and Breakwater's events go to logw.
func bench(o options, logw io.Writer) (*Report, error) {
	tmp, err := os.MkdirTemp("", "breakwater-bench-")
	if err != nil {
		return nil, fmt.Errorf("a directory for checkpoint files: %w", err)
	}
	defer os.RemoveAll(tmp)

	if o.judge == "" {
		o.judge = judgeCPU // it varies half as much as wall time: docs/performance.md
	}
	e := &env{scale: o.scale, cap: o.cap, size: o.size, log: zerolog.Nop(), tmp: tmp, memprof: o.memprof, judge: o.judge}
	if o.verbose {
		e.progress = logw
		e.log = zerolog.New(zerolog.ConsoleWriter{Out: logw, TimeFormat: "15:04:05.000"}).With().Timestamp().Logger().Level(zerolog.InfoLevel)
	}
	rep := &Report{Started: time.Now(), Scale: o.scale, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadBefore: loadAverage()}
	rep.Notes = notes(e, o.scenarios)
	for _, s := range o.scenarios {
		start := time.Now()
		rows, err := s.run(e)
		if skip := (*skipError)(nil); errors.As(err, &skip) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: SKIPPED: %s.", s.name, skip.why))
			fmt.Fprintf(logw, "bench: scenario %s skipped: %s\n", s.name, skip.why)
			continue
		}
		if err != nil {
			return nil, err
		}
		e.say("%-14s done in %v", s.name, time.Since(start).Round(time.Millisecond))
		rep.Results = append(rep.Results, rows...)
	}
	rep.Finished, rep.LoadAfter = time.Now(), loadAverage()
	return rep, nil
}

// notes say how the run was set up, above the table.
func notes(e *env, sel []scenario) []string {
	backoffs := make([]string, maxRetries)
	for i := range backoffs {
		backoffs[i] = (e.backoff() << i).String()
	}
	n := []string{
		fmt.Sprintf("Time scale ÷%g: the retry loop waits %s before its 5 retries (1 s … 16 s in real life); hang's request timeout is 10 s ÷ %g = %v, hang-10s's a real 10 s, elsewhere Colly's default 10 s. Breaker cooldowns are not scaled (60 s: no run lasts long enough to probe).",
			e.scale, strings.Join(backoffs, ", "), e.scale, e.scaled(10*time.Second)),
		"plain: Colly (async), no retries: the reference.",
		"retry: Colly + OnError → Request.Retry() up to 5 times per URL with exponential backoff, counted per URL (not in the shared Ctx).",
		"gobreaker: Colly + sony/gobreaker/v2 TwoStepCircuitBreaker per host: Allow() in OnRequest (abort if refused), done(err) in OnScraped/OnError; default settings (trips on the 6th consecutive failure, 60 s open, 1 half-open request), 4xx counted as success; + the same retry loop (a refused request never reaches OnError: it is not retried, it is lost).",
		"breakwater: Colly + validate.New(Require(testserver.TitleSelector)) + breaker.New(Config{Profile: Standard(), Validator, Pacing{Parallelism: 2}, BaseTransport}) (Standard cuts a request at 4 × its domain's p95 latency, at least 1 s, once the domain has 20 successes) + the same retry loop, asked from OnAttempt for degraded outcomes only (Breakwater re-sends 429s itself).",
		"drop-in: the retry client's collector unchanged (the shared LimitRule, its transport, the same OnError → Request.Retry() loop for every error) + validate.New(Require(testserver.TitleSelector)) + breaker.New(Config{Profile: Standard(), Validator}) added with breakwater.Use: no pacing, no BaseTransport, no checkpoint. Its goals are the recommended wiring's, except degrade (the strict need + P − 1 = 11) and hang-10s (within 1.5×, since it keeps the shared LimitRule).",
		"Baselines and the drop-in use Colly's usual LimitRule{DomainGlob: \"*\", Parallelism: 2}: one pool of 2 slots shared by every host. The recommended Breakwater wiring replaces it with per-domain pacing of 2. Overhead gives the baselines and the drop-in one such rule per store instead, so every client has 2 in flight per store there.",
	}
	for _, s := range sel {
		for _, kind := range []broadKind{broadLarge, broadSmall} {
			if s.name != kind.name {
				continue
			}
			n = append(n, fmt.Sprintf("%s: %d domains × %d pages (a %s valid product page) from an in-memory transport (no sockets), %d goroutines visiting on a synchronous collector (as Colly's queue does), %d rounds of plain Colly and Breakwater taking turns to go first, Breakwater with validate, breaker (Standard, pacing 2 per domain, idle TTL %v so a short run reaches a long crawl's steady state), the checkpoint on storage/memory and metrics (scraped every 5 s); heap per domain is heap after GC over the heap before the run: per active domain from one more Breakwater run that keeps every domain whole, per idle domain once every domain is compacted (the checkpoint's records and the collector let go in both).",
				kind.name, e.domainsFor(kind), broadPages, kind.pageKB, broadWorkers, e.size.broadRounds, broadIdleTTL))
		}
		if s.name == "durable" {
			n = append(n, fmt.Sprintf("durable: the overhead scenario's stores and pages; breakwater is the recommended wiring with its checkpoint on storage/bolt (a file); the anchor, %s, is what a Colly user has today for a crawl that survives a restart: a synchronous collector driven by colly/queue (2 threads per store, one LimitRule of 2 per store) with the queue, the visited set and the cookies in Redis (a storage written for the bench that sends gocolly/redisstorage's commands: RPUSH/LPOP/LLEN, SET/GET). CPU is the Go process's plus the Redis server's (INFO cpu, before and after each crawl, for both clients); %d rounds in alternating order, the goal judged on the median of the rounds' ratios of pages per CPU-second.", anchorClient, e.size.overheadRounds))
		}
		if s.name == "overhead" {
			n = append(n, fmt.Sprintf("overhead: testserver's pages served from memory (byte-identical; testserver renders every page per request, about 68 µs), so the CPU measured is the clients'; Breakwater also keeps the embedded checkpoint (checkpoint.New on storage/bolt, a bbolt file in a temporary directory); %d rounds, clients in rotating order; each round's ratios to plain Colly in that round (pages/s, and CPU per page), the goal judged on the median of the %s ones, with their range.", e.size.overheadRounds, e.judge))
		}
	}
	return n
}

// loadAverage is the machine's 1-minute load average, -1 if unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	l, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return l
}
