package breaker_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// TestDropInRateLimitedStoreEndsWithEveryPageOnce is the README's one
// line against a store that rate-limits with 429 + Retry-After, in every
// wiring: the crawl ends, every page is saved, none is fetched ok twice
// (a user's retry loop included), and the pace never backs off past
// MaxGap.
func TestDropInRateLimitedStoreEndsWithEveryPageOnce(t *testing.T) {
	ws := dropInWirings()
	if testing.Short() {
		// Each wiring takes seconds: a quick run takes the synchronous one
		// and the asynchronous one with the most parts; the full check
		// (.ci/run) runs every one.
		ws = wiringsNamed(t, ws, "sync+retry+slow", "async-glob+pacing+retry+slow")
	}
	for _, w := range ws {
		t.Run(w.name, func(t *testing.T) {
			store := startStore(t, testserver.Config{Products: 40,
				Scenario: testserver.Scenario{Mode: testserver.RateLimit, Rate: 60, Burst: 4}})
			run := runDropIn(t, w, store, productURLs(store, 40), breaker.Config{})
			if !run.ended {
				return
			}
			if store.CountMode(testserver.RateLimit) == 0 {
				t.Fatalf("%s: the store never throttled: the test proves nothing", w.name)
			}
			if got := store.CountMode(testserver.Healthy); got != 40 {
				t.Errorf("%s: %d pages served, want all 40", w.name, got)
			}
			if twice := okTwice(store); len(twice) > 0 {
				t.Errorf("%s: pages fetched ok twice: %v", w.name, twice)
			}
			if st := run.b.State(store.Host()); st != circuit.Closed {
				t.Errorf("%s: a rate-limited store's circuit is %s, want closed", w.name, st)
			}
			for _, s := range run.b.Stats() {
				if s.Pace.Gap > breaker.DefaultMaxGap {
					t.Errorf("%s: gap %v past the %v cap", w.name, s.Pace.Gap, breaker.DefaultMaxGap)
				}
			}
		})
	}
}

// TestSustainedThrottlingEndsTripped: a store that answers nothing but
// 429s. The crawl must end once the throttling has lasted the horizon,
// with every URL either tried and listed unfinished, and the run tripped.
func TestSustainedThrottlingEndsTripped(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 30,
		Scenario: testserver.Scenario{Mode: testserver.Throttle, RetryAfter: time.Second}})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{ThrottleHorizon: 1500 * time.Millisecond}})
	c := colly.NewCollector(colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2})
	b.Register(c)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, u := range productURLs(store, 30) {
			c.Visit(u)
		}
		c.Wait()
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("a store that only throttles kept the crawl waiting past 15s")
	}
	if got := len(b.Unfinished().URLs); got != 30 {
		t.Errorf("%d URLs listed unfinished, want all 30", got)
	}
	o := outcome.Decide(-1, b)
	if o.State != outcome.Tripped {
		t.Errorf("outcome %s (%s), want tripped", o.State, o.Reason)
	}
	if n := store.Count(); n > 12 {
		t.Errorf("%d requests to a store that only throttles, 1 s apart at most for 1.5 s: the pace did not hold", n)
	}
}

// TestGateRefusalReachesOnErrorAsErrOpen: a request refused at the gate
// reaches the user's OnError with an error that is ErrOpen, never as
// Colly's "Aborted before Do Request".
func TestGateRefusalReachesOnErrorAsErrOpen(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 100, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 5}})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
	c := colly.NewCollector(colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2})
	var mu sync.Mutex
	var open, aborted int
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		defer mu.Unlock()
		var coe *circuit.OpenError
		switch {
		case errors.Is(err, colly.ErrAbortedBeforeRequest):
			aborted++
		case errors.Is(err, breaker.ErrOpen) && errors.As(err, &coe) && coe.Key == store.Host():
			open++
		}
	})
	b.Register(c)
	for _, u := range productURLs(store, 100) {
		c.Visit(u)
	}
	c.Wait()
	if aborted != 0 {
		t.Errorf("%d refusals reached OnError as ErrAbortedBeforeRequest", aborted)
	}
	if open == 0 {
		t.Error("no refusal reached OnError as ErrOpen: the gate never refused, or its error was lost")
	}
	if store.Count()+int(b.Stats()[0].Refused) < 100 {
		t.Errorf("%d sent + %d refused < 100 queued", store.Count(), b.Stats()[0].Refused)
	}
}

// TestCutBodyIsDegradedWithoutAValidator: a 200 whose body did not arrive
// whole is Degraded, validator or not.
func TestCutBodyIsDegradedWithoutAValidator(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 40, Scenario: testserver.Scenario{Mode: testserver.Truncated}})
	var mu sync.Mutex
	classes := map[circuit.Class]int{}
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), OnAttempt: func(a observe.Attempt) {
		mu.Lock()
		classes[a.Result.Class]++
		mu.Unlock()
	}})
	c := colly.NewCollector()
	b.Register(c)
	for _, u := range productURLs(store, 40) {
		c.Visit(u)
	}
	if classes[circuit.Success] != 0 || classes[circuit.Degraded] == 0 {
		t.Fatalf("cut bodies classed %v, want degraded and never success", classes)
	}
	if st := b.State(store.Host()); st != circuit.Open {
		t.Fatalf("circuit %s after cut bodies only, want open", st)
	}
}

// TestCrawlDeadlineIsNotTheSitesFailure: the crawl's own deadline ends
// requests queued and in flight. Those are unfinished, not failures of the
// sites: no circuit opens, no fleet alarm, and the run is tripped (work
// left), never complete and never error.
func TestCrawlDeadlineIsNotTheSitesFailure(t *testing.T) {
	fleet, err := testserver.StartFleet(
		testserver.Config{Products: 60, Scenario: testserver.Scenario{Latency: 30 * time.Millisecond}},
		testserver.Config{Products: 60, Scenario: testserver.Scenario{Latency: 30 * time.Millisecond}},
		testserver.Config{Products: 60, Scenario: testserver.Scenario{Latency: 30 * time.Millisecond}},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
	c := colly.NewCollector(colly.Async(true), colly.StdlibContext(ctx))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2})
	var mu sync.Mutex
	ok := map[string]bool{}
	c.OnScraped(func(r *colly.Response) { mu.Lock(); ok[r.Request.URL.String()] = true; mu.Unlock() })
	b.Register(c)
	var all []string
	for _, s := range fleet.Stores {
		all = append(all, productURLs(s, 60)...)
	}
	for _, u := range all {
		c.Visit(u)
	}
	c.Wait()
	if len(ok) == 0 || len(ok) == len(all) {
		t.Fatalf("%d of %d pages done: the deadline must cut the crawl in the middle for this test to mean anything", len(ok), len(all))
	}
	for _, s := range b.Stats() {
		if s.State != circuit.Closed || s.Outcomes[circuit.Degraded.String()] != 0 {
			t.Errorf("%s: circuit %s with %d degraded: the crawl's deadline was counted against the site", s.Domain, s.State, s.Outcomes[circuit.Degraded.String()])
		}
	}
	unfinished := map[string]bool{}
	for _, u := range b.Unfinished().URLs {
		unfinished[u.URL] = true
	}
	for _, u := range all {
		if !ok[u] && !unfinished[u] {
			t.Errorf("%s neither done nor listed unfinished: lost", u)
			break
		}
	}
	if o := outcome.Decide(-1, b); o.State != outcome.Tripped {
		t.Errorf("outcome %s (%s), want tripped: work is left", o.State, o.Reason)
	}
}

// TestHangingFromTheStartIsCutByTheFleetsPrior: a site that hangs from its
// very first request has no latency of its own to measure. With Colly's
// default 10 s timeout and a LimitRule shared by every host, its requests
// would hold the shared slots for 10 s each. It borrows the timeout the
// healthy domains earned, holds one slot until its first success (it has
// none), and trips; the healthy stores get every page.
func TestHangingFromTheStartIsCutByTheFleetsPrior(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	cfgs := []testserver.Config{{Products: 30, Scenario: testserver.Scenario{Mode: testserver.Hang, Hold: 15 * time.Second}}}
	for range 3 {
		cfgs = append(cfgs, testserver.Config{Products: 30, Scenario: testserver.Scenario{Latency: 2 * time.Millisecond}})
	}
	fleet, err := testserver.StartFleet(cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	hang := fleet.Stores[0]
	var mu sync.Mutex
	var long int
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), OnAttempt: func(a observe.Attempt) {
		if a.Result.Latency >= 9*time.Second {
			mu.Lock()
			long++
			mu.Unlock()
		}
	}})
	c := colly.NewCollector(colly.Async(true)) // Colly's own 10 s timeout
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2})
	b.Register(c)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 30; i++ {
			for _, s := range fleet.Stores {
				c.Visit(s.ProductURL(i))
			}
		}
		c.Wait()
	}()
	select {
	case <-done:
	case <-time.After(25 * time.Second):
		t.Fatal("the crawl did not end within 25 s: the hanging site's requests kept the client's timeout")
	}
	if st := b.State(hang.Host()); st != circuit.Open {
		t.Errorf("hanging site's circuit %s, want open", st)
	}
	if long > 1 {
		t.Errorf("%d requests waited out the client's 10 s timeout; at most the first may", long)
	}
	for _, s := range fleet.Stores[1:] {
		if got := s.CountMode(testserver.Healthy); got != 30 {
			t.Errorf("healthy %s served %d of 30", s.Host(), got)
		}
	}
}

// TestUserAbortAfterTheBreakerDoesNotStallTheDomain: a request the user's
// own OnRequest aborts after the breaker reserved its slot never comes to
// claim it; the slot lapses and the crawl goes on.
func TestUserAbortAfterTheBreakerDoesNotStallTheDomain(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	store := startStore(t, testserver.Config{Products: 20})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{Parallelism: 2}})
	c := colly.NewCollector(colly.Async(true))
	b.Register(c)
	c.OnRequest(func(r *colly.Request) { // the user's filter, registered after the breaker
		if n := len(r.URL.Path); r.URL.Path[n-1]%2 == 1 {
			r.Abort()
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, u := range productURLs(store, 20) {
			c.Visit(u)
		}
		c.Wait()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the crawl stalled on slots reserved for requests the user aborted")
	}
	if got := store.Count(); got != 10 {
		t.Fatalf("store received %d requests, want the 10 the user let through", got)
	}
}

// TestDropInSustainedThrottlingEndsInEveryWiring: a store that answers
// nothing but 429s ends the crawl in every wiring once the throttling has
// lasted the horizon; every URL is listed unfinished, none is lost, and no
// request leaves before a Retry-After has passed.
func TestDropInSustainedThrottlingEndsInEveryWiring(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	for _, w := range dropInWirings() {
		t.Run(w.name, func(t *testing.T) {
			store := startStore(t, testserver.Config{Products: 10,
				Scenario: testserver.Scenario{Mode: testserver.Throttle, RetryAfter: time.Second}})
			horizon := breaker.Config{Pacing: breaker.Pacing{ThrottleHorizon: 1500 * time.Millisecond}}
			if w.pacing {
				horizon = breaker.Config{Pacing: breaker.Pacing{Parallelism: 2, ThrottleHorizon: 1500 * time.Millisecond}}
			}
			w.pacing = false // the option above stands for it
			run := runDropIn(t, w, store, productURLs(store, 10), horizon)
			if !run.ended {
				return
			}
			if got := len(run.b.Unfinished().URLs); got != 10 {
				t.Errorf("%s: %d URLs listed unfinished, want all 10", w.name, got)
			}
			hits := store.Requests()
			for i := 1; i < len(hits); i++ {
				if hits[i-1].Status == 429 && hits[i].Time.Before(hits[i-1].Time.Add(time.Second)) {
					t.Errorf("%s: request %d left %v after a 429 asking for 1 s", w.name, hits[i].Seq, hits[i].Time.Sub(hits[i-1].Time))
					break
				}
			}
		})
	}
}
