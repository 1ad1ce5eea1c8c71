package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/rs/zerolog"
)

// scenario is one situation every client crawls in turn, on stores of its
// own started for each run.
type scenario struct {
	name  string
	issue int  // the GitHub issue whose goals it measures
	deflt bool // part of the default run
	named bool // run only when named: not in "all" either
	about string
	run   func(e *env) ([]Result, error)
}

var scenarios = []scenario{
	{"degrade", 8, true, false, "one store, N product pages queued up front, 503 from request 31 on", runDegrade},
	{"hang", 8, true, false, "20 stores × 50 pages; one hangs from its 26th request; timeout 10 s ÷ scale", runHang},
	{"empty", 8, true, false, "one store answering every page with a 200 consent shell (~900 bytes)", runEmpty},
	{"overhead", 8, true, false, "5,000 pages from 5 healthy stores; pages/s against plain Colly", runOverhead},
	{"ratelimit", 9, false, false, "token bucket 10/s, burst 5, 429 + Retry-After, 300 pages", func(e *env) ([]Result, error) { return runRateLimit(e, "ratelimit", 429) }},
	{"ratelimit-503", 9, false, false, "the same bucket answering 503 without Retry-After", func(e *env) ([]Result, error) { return runRateLimit(e, "ratelimit-503", 503) }},
	{"hang-10s", 9, false, false, "the hang scenario with a real 10 s request timeout", runHang10s},
	{"durable", 44, false, false, "the overhead scenario's 5,000 pages, the recommended wiring with its checkpoint file against Colly's queue and storage on Redis; pages per CPU-second, Redis's CPU counted", runDurable},
	{"broad", 15, false, true, "-domains domains (default 50,000) × 2 pages of 38 KB through an in-memory transport, every extension on, against plain Colly", func(e *env) ([]Result, error) { return runBroad(e, broadLarge) }},
	{"broad-small", 44, false, true, "-domains domains (default 1,000,000) × 2 pages of 1.5 KB through an in-memory transport, every extension on: the CPU added a page, the heap of an active domain", func(e *env) ([]Result, error) { return runBroad(e, broadSmall) }},
}

// sizes are a scenario's dimensions: the issues' for a real run, tiny ones
// for the test that keeps the command from rotting.
type sizes struct {
	degradePages, degradeAfter       int
	hangStores, hangPages, hangAfter int
	hangRounds, hang10Rounds         int // rounds of hang and hang-10s; each run keeps its fastest
	emptyPages                       int
	overheadStores, overheadPerStore int
	overheadRounds                   int
	ratePages                        int
	rate                             float64
	burst                            int
	hangTimeout                      time.Duration // hang's request timeout; 0 = 10 s ÷ scale
	hang10Timeout                    time.Duration
	broadDomains                     int // the broad scenarios' domains (-domains); 0 for each one's default
	broadRounds                      int // the broad scenarios' rounds (-broad-rounds)
}

var fullSize = sizes{
	degradePages: 300, degradeAfter: 30,
	hangStores: 20, hangPages: 50, hangAfter: 25, hangRounds: 3, hang10Rounds: 2,
	emptyPages:     300,
	overheadStores: 5, overheadPerStore: 1000, overheadRounds: 5,
	ratePages: 300, rate: 10, burst: 5,
	hang10Timeout: 10 * time.Second,
	broadRounds:   3,
}

var tinySize = sizes{
	degradePages: 80, degradeAfter: 30,
	hangStores: 4, hangPages: 16, hangAfter: 12, hangRounds: 1, hang10Rounds: 1,
	// The test runs the tiny set beside the rest of the suite under -race:
	// 10 s ÷ 100 = 100 ms cut healthy pages on a busy 2-core machine.
	hangTimeout:    300 * time.Millisecond,
	emptyPages:     40,
	overheadStores: 2, overheadPerStore: 100, overheadRounds: 1,
	ratePages: 20, rate: 20, burst: 5,
	hang10Timeout: 200 * time.Millisecond,
	broadDomains:  300, broadRounds: 1,
}

// env is what every scenario runs with.
type env struct {
	scale    float64       // time divisor for the retry loop's backoff and the hang timeout
	cap      time.Duration // longest run of one client
	size     sizes
	log      zerolog.Logger // Breakwater's events (-v); Nop otherwise
	progress io.Writer      // one line per run (-v); nil for none
	tmp      string         // directory for checkpoint files
	memprof  string         // where to write the broad scenario's heap profile (-memprofile); "" for none
	judge    judgement      // which per-round figure the overhead and broad goals are judged on (-judge)
}

// judgement names the figure the overhead and broad goals are judged on.
type judgement string

const (
	judgeWall judgement = "wall" // pages per second, wall clock
	judgeCPU  judgement = "cpu"  // the process's CPU time per page
)

// backoff is the retry loop's first wait: 1 s of real life, scaled.
func (e *env) backoff() time.Duration { return e.scaled(time.Second) }

func (e *env) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) / e.scale)
}

// defaultTimeout is the request timeout where nothing hangs: Colly's own.
const defaultTimeout = 10 * time.Second

func (e *env) say(format string, args ...any) {
	if e.progress != nil {
		fmt.Fprintf(e.progress, format+"\n", args...)
	}
}

// productURLs are store s's product pages 1..n.
func productURLs(s *testserver.Store, n int) []string {
	urls := make([]string, n)
	for i := range urls {
		urls[i] = s.ProductURL(i + 1)
	}
	return urls
}

// interleave queues stores' product pages round-robin, as a frontier over
// many sites does: page 1 of every store, then page 2, and so on.
func interleave[S productStore](stores []S, perStore int) []string {
	urls := make([]string, 0, len(stores)*perStore)
	for i := 1; i <= perStore; i++ {
		for _, s := range stores {
			urls = append(urls, s.ProductURL(i))
		}
	}
	return urls
}

// productStore is a store as the scenarios queue it: a testserver.Store,
// or the overhead scenario's cachedStore.
type productStore interface {
	Host() string
	ProductURL(n int) string
	Count() int
}

func hostsOf[S productStore](stores []S) []string {
	hs := make([]string, len(stores))
	for i, s := range stores {
		hs[i] = s.Host()
	}
	return hs
}

// selectScenarios reads -scenarios: "default", "all", or a comma-separated
// list of names.
func selectScenarios(spec string) ([]scenario, error) {
	switch spec {
	case "", "default":
		var out []scenario
		for _, s := range scenarios {
			if s.deflt {
				out = append(out, s)
			}
		}
		return out, nil
	case "all":
		var out []scenario
		for _, s := range scenarios {
			if !s.named {
				out = append(out, s)
			}
		}
		return out, nil
	}
	var out []scenario
	seen := map[string]bool{}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		found := false
		for _, s := range scenarios {
			if s.name == name {
				out = append(out, s)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown scenario %q: use default, all, or names from %s", name, scenarioNames())
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenario in %q", spec)
	}
	return out, nil
}

func scenarioNames() string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
