package breaker_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A wiring is how an existing Colly scraper is set up before Breakwater is
// added to it with one line: the promises must hold in every one, not
// only in productcrawl's.
type wiring struct {
	name      string
	async     bool
	limit     string // "": no LimitRule; "glob": one rule for every host; "host": a rule for the store's host
	pacing    bool   // breaker.Config.Pacing with the same parallelism
	retry     bool   // the user's OnError → r.Request.Retry() loop, up to 3 times a URL
	transport bool   // a custom transport of the user's, set before the breaker
	slow      bool   // the user's callbacks, registered first, take a few ms: the outcome reaches the breaker late
}

// parallelism is the most requests the wiring lets one domain have in
// flight: the LimitRule's or the pace's 2, 1 when synchronous, and
// without either the breaker's own cap, FailuresToTrip (more in flight could
// never be stopped by it).
func (w wiring) parallelism(p breaker.Profile) int {
	switch {
	case !w.async:
		return 1
	case w.limit != "" || w.pacing:
		return 2
	}
	return breaker.FailuresToTrip(p)
}

func dropInWirings() []wiring {
	var ws []wiring
	for _, base := range []wiring{
		{name: "sync"},
		{name: "async", async: true},
		{name: "async-glob", async: true, limit: "glob"},
		{name: "async-host", async: true, limit: "host"},
	} {
		for _, pacing := range []bool{false, true} {
			if pacing && !base.async {
				continue
			}
			w := base
			w.pacing = pacing
			if pacing {
				w.name += "+pacing"
			}
			ws = append(ws, w)
			r := w
			r.retry, r.slow, r.name = true, true, w.name+"+retry+slow"
			ws = append(ws, r)
		}
	}
	ws = append(ws, wiring{name: "async-glob+transport+retry", async: true, limit: "glob", retry: true, transport: true})
	return ws
}

// wiringsNamed returns the wirings of ws with the given names; a name
// that is none of them fails the test.
func wiringsNamed(t *testing.T, ws []wiring, names ...string) []wiring {
	t.Helper()
	var out []wiring
	for _, w := range ws {
		if slices.Contains(names, w.name) {
			out = append(out, w)
		}
	}
	if len(out) != len(names) {
		t.Fatalf("wirings %v: only %d of them exist", names, len(out))
	}
	return out
}

// countingTransport is the user's own transport: it counts what it carried.
type countingTransport struct {
	n    atomic.Int64
	base http.RoundTripper
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.base.RoundTrip(r)
}

// dropInRun is one crawl in one wiring against one store.
type dropInRun struct {
	b         *breaker.Breaker
	transport *countingTransport
	refused   atomic.Int64
	ended     bool
}

func runDropIn(t *testing.T, w wiring, store *testserver.Store, urls []string, cfg breaker.Config) *dropInRun {
	t.Helper()
	return runDropInWith(t, w, store, urls, nil, cfg)
}

// runDropInWith also runs add on the collector just before the breaker is
// registered: the validator, say.
func runDropInWith(t *testing.T, w wiring, store *testserver.Store, urls []string, add func(*colly.Collector), cfg breaker.Config) *dropInRun {
	t.Helper()
	run := &dropInRun{}
	if cfg.OnRefused != nil {
		t.Fatal("runDropIn counts the refusals: give no OnRefused")
	}
	cfg.OnRefused = func(*colly.Request, *circuit.OpenError) { run.refused.Add(1) }
	if w.pacing {
		cfg.Pacing = breaker.Pacing{Parallelism: 2}
	}
	b := newBreaker(t, cfg)
	run.b = b

	// The existing scraper, as its author wrote it.
	c := colly.NewCollector(colly.Async(w.async))
	c.SetRequestTimeout(2 * time.Second)
	switch w.limit {
	case "glob":
		if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2}); err != nil {
			t.Fatal(err)
		}
	case "host":
		if err := c.Limit(&colly.LimitRule{DomainGlob: store.Host(), Parallelism: 2}); err != nil {
			t.Fatal(err)
		}
	}
	if w.transport {
		run.transport = &countingTransport{base: http.DefaultTransport}
		c.WithTransport(run.transport)
	}
	if w.slow {
		c.OnScraped(func(*colly.Response) { time.Sleep(3 * time.Millisecond) })
		c.OnError(func(*colly.Response, error) { time.Sleep(3 * time.Millisecond) })
	}
	if w.retry {
		c.OnError(retryEveryError(3))
	}

	// The one line.
	if add != nil {
		add(c)
	}
	b.Register(c)

	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, u := range urls {
			c.Visit(u)
		}
		c.Wait()
	}()
	select {
	case <-done:
		run.ended = true
	case <-time.After(20 * time.Second):
		t.Errorf("%s: the crawl did not end within 20s", w.name)
	}
	return run
}

func productURLs(s *testserver.Store, n int) []string {
	urls := make([]string, n)
	for i := range urls {
		urls[i] = s.ProductURL(i + 1)
	}
	return urls
}

// okTwice returns the paths the store served a healthy 200 more than once.
func okTwice(s *testserver.Store) []string {
	seen := map[string]int{}
	var twice []string
	for _, h := range s.Requests() {
		if h.Status == 200 && h.Mode == testserver.Healthy {
			if seen[h.Path]++; seen[h.Path] == 2 {
				twice = append(twice, h.Path)
			}
		}
	}
	return twice
}

func checkTransport(t *testing.T, w wiring, run *dropInRun, s *testserver.Store) {
	t.Helper()
	if run.transport != nil && int(run.transport.n.Load()) != s.Count() {
		t.Errorf("%s: the user's transport carried %d requests, the store received %d: it was bypassed", w.name, run.transport.n.Load(), s.Count())
	}
}

// TestDropInTripBoundHoldsInEveryWiring degrades a store after 30 pages,
// and, separately, from its second page (a fresh start into a failing
// site), and counts in the store's own log the requests sent into the
// failure: at most need + P − 1 in every wiring.
func TestDropInTripBoundHoldsInEveryWiring(t *testing.T) {
	need := breaker.FailuresToTrip(breaker.Standard())
	for _, after := range []int{30, 1} {
		for _, w := range dropInWirings() {
			t.Run(fmt.Sprintf("%s/after%d", w.name, after), func(t *testing.T) {
				store := startStore(t, testserver.Config{Products: 150, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: after}})
				run := runDropIn(t, w, store, productURLs(store, 150), breaker.Config{})
				if !run.ended {
					return
				}
				bound := need + w.parallelism(breaker.Standard()) - 1
				if got := store.SentAfterFailing(); got > bound || got < need {
					t.Errorf("%s: %d requests into the failing store, want %d..%d (need %d + P %d − 1)", w.name, got, need, bound, need, w.parallelism(breaker.Standard()))
				}
				if st := run.b.State(store.Host()); st != circuit.Open {
					t.Errorf("%s: circuit %s, want open", w.name, st)
				}
				if run.refused.Load() == 0 {
					t.Errorf("%s: nothing refused: the breaker never stood between the queue and the failing store", w.name)
				}
				checkTransport(t, w, run, store)
			})
		}
	}
}

// TestDropInHealthyStoreIsNeverTripped crawls a healthy store in every
// wiring: every page once, nothing refused, the circuit closed.
func TestDropInHealthyStoreIsNeverTripped(t *testing.T) {
	for _, w := range dropInWirings() {
		t.Run(w.name, func(t *testing.T) {
			store := startStore(t, testserver.Config{Products: 60})
			run := runDropIn(t, w, store, productURLs(store, 60), breaker.Config{})
			if !run.ended {
				return
			}
			if store.Count() != 60 || run.refused.Load() != 0 || run.b.State(store.Host()) != circuit.Closed {
				t.Errorf("%s: %d requests, %d refused, circuit %s; want 60, 0, closed", w.name, store.Count(), run.refused.Load(), run.b.State(store.Host()))
			}
			if twice := okTwice(store); len(twice) > 0 {
				t.Errorf("%s: pages fetched ok twice: %v", w.name, twice)
			}
			checkTransport(t, w, run, store)
		})
	}
}

// TestDropInConsentShellsTripWithinTheBound: pages that answer 200 but are
// consent shells are judged after Colly has freed the LimitRule slot (the
// validator needs the parsed page), the user's slow callbacks delaying the
// verdict further. The requests into the failure still stay within
// need + P − 1 in every wiring.
func TestDropInConsentShellsTripWithinTheBound(t *testing.T) {
	need := breaker.FailuresToTrip(breaker.Standard())
	for _, w := range dropInWirings() {
		t.Run(w.name, func(t *testing.T) {
			store := startStore(t, testserver.Config{Products: 150, Scenario: testserver.Scenario{Mode: testserver.Empty, After: 30}})
			v, err := validate.New(validate.Config{Checks: []validate.Check{validate.MinBytes(1024)}})
			if err != nil {
				t.Fatal(err)
			}
			run := runDropInWith(t, w, store, productURLs(store, 150), v.Register, breaker.Config{Validator: v})
			if !run.ended {
				return
			}
			bound := need + w.parallelism(breaker.Standard()) - 1
			if got := store.SentAfterFailing(); got > bound || got < need {
				t.Errorf("%s: %d requests into the consent shells, want %d..%d", w.name, got, need, bound)
			}
			if st := run.b.State(store.Host()); st != circuit.Open {
				t.Errorf("%s: circuit %s, want open", w.name, st)
			}
		})
	}
}

// retryEveryError is a user's naive retry loop: every error, 429s and
// refusals included, sent again up to max times a URL.
func retryEveryError(max int) func(*colly.Response, error) {
	var mu sync.Mutex
	tries := map[string]int{}
	return func(r *colly.Response, _ error) {
		u := r.Request.URL.String()
		mu.Lock()
		tries[u]++
		n := tries[u]
		mu.Unlock()
		if n <= max {
			r.Request.Retry()
		}
	}
}
