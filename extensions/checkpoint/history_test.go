package checkpoint_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// historyRun is one process's run over the checkpoint at path: a crawl of
// store with the standard profile at parallelism p (paced, so the bound
// is strict), stopped once stopAfter failures were recorded (0: never).
// It returns the outcome and the breaker.
func historyRun(t *testing.T, path string, clk *clocktest.Fake, store *testserver.Store, p int, stopAfter int64) (outcome.Outcome, *breaker.Breaker) {
	t.Helper()
	cp := openCP(t, path, checkpoint.Config{Clock: clk})
	var failures atomic.Int64
	var stopped atomic.Bool
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk, Pacing: breaker.Pacing{Parallelism: p}, OnAttempt: func(a observe.Attempt) {
		if a.Result.Class.Failure() && failures.Add(1) >= stopAfter && stopAfter > 0 {
			stopped.Store(true)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Observe(b); err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector(colly.Async(true))
	c.SetRequestTimeout(5 * time.Second)
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: p}); err != nil {
		t.Fatal(err)
	}
	// The stop, before every extension: a request cut by it was never sent.
	stop := func(r *colly.Request) {
		if stopped.Load() {
			r.Abort()
		}
	}
	c.OnRequest(stop)
	c.OnRequestHeaders(stop)
	b.Register(c)
	cp.Register(c)
	var mu sync.Mutex
	c.OnHTML(testserver.ProductLinkSelector+", "+testserver.NextSelector, func(e *colly.HTMLElement) {
		mu.Lock()
		defer mu.Unlock()
		_ = e.Request.Visit(e.Attr("href"))
	})
	if _, err := cp.Resume(c); err != nil {
		t.Fatal(err)
	}
	_ = c.Visit(store.URL() + "/")
	c.Wait()
	o := outcome.Decide(-1, b, cp)
	cp.SetOutcome(o)
	if err := closeCP(cp); err != nil {
		t.Fatal(err)
	}
	return o, b
}

// failingHits counts the requests the store answered with its failure.
func failingHits(s *testserver.Store) int {
	n := 0
	for _, h := range s.Requests() {
		if h.Failing() {
			n++
		}
	}
	return n
}

// A domain's failure history survives a restart. A crawl stopped while
// its store had started failing (the circuit closed, a few failures in its
// full window) and resumed into the store still failing trips within the
// bound of an uninterrupted run, need + P − 1 failing requests in all,
// not after a fresh window's worth. Resumed again after the cooldown, the
// circuit is on probation as a half-open one is: the first failure
// re-opens it, so at most P requests reach the store.
func TestResumeIntoAFailingSiteTripsAsAnUninterruptedRunWould(t *testing.T) {
	const p = 2
	need := breaker.Standard().Settings().FailuresToTrip()
	// 25 healthy answers fill the window with successes first.
	store := startStore(t, testserver.Config{Products: 60, PerPage: 60,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 25}})
	path := dbPath(t)
	clk := clocktest.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))

	o, b := historyRun(t, path, clk, store, p, 4)
	first := failingHits(store)
	if o.State != outcome.Tripped || b.State(store.Host()) != circuit.Closed || first < 4 || first >= need {
		t.Fatalf("first run: %v (%s), circuit %v, %d failing requests; want tripped (stopped), closed, 4 to %d",
			o.State, o.Reason, b.State(store.Host()), first, need-1)
	}

	o, b = historyRun(t, path, clk, store, p, 0)
	sent := failingHits(store)
	if b.State(store.Host()) != circuit.Open || o.State != outcome.Tripped {
		t.Fatalf("resumed into the failing store: circuit %v, %v (%s); want open, tripped", b.State(store.Host()), o.State, o.Reason)
	}
	if sent > need+p-1 {
		t.Errorf("%d failing requests before the trip (%d before the restart, %d after); an uninterrupted run sends at most need + P − 1 = %d",
			sent, first, sent-first, need+p-1)
	}

	clk.Advance(breaker.Standard().Cooldown + time.Second)
	o, b = historyRun(t, path, clk, store, p, 0)
	t.Logf("failing requests: %d before the restart, %d more before the trip (bound %d in all), %d after the cooldown (bound %d)",
		first, sent-first, need+p-1, failingHits(store)-sent, p)
	// Tripped, or an error if a URL has spent its third attempt.
	if got := failingHits(store) - sent; got > p || b.State(store.Host()) != circuit.Open || o.State < outcome.Tripped {
		t.Errorf("resumed after the cooldown into the failing store: %d requests, circuit %v, %v; want at most %d (a probe and those in flight), open, not complete",
			got, b.State(store.Host()), o.State, p)
	}
}
