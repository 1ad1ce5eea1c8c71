package breaker_test

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// TestSynchronousCollectorFollowsLinksFromInsideItsCallbacks: a
// synchronous collector visits a page's links from inside the page's
// OnHTML, before the page's outcome is known. With one request in flight
// allowed, the page's slot must be free by then or the crawl deadlocks.
func TestSynchronousCollectorFollowsLinksFromInsideItsCallbacks(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 30})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{Parallelism: 1}})
	c := colly.NewCollector()
	b.Register(c)
	c.OnHTML("a.product-link, a.next", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Visit(store.URL() + "/")
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a synchronous crawl following links deadlocked")
	}
	if got := store.CountMode(testserver.Healthy); got < 30 {
		t.Fatalf("%d pages served, want every product and listing page", got)
	}
}

// TestSynchronousLatencyIsTheRequestsOwn: in a synchronous collector a
// listing page's callbacks fetch its links before its outcome is known.
// Its latency is its own request's, not the subtree's, or a healthy store
// looks like one whose latency climbs (the aggressive profile trips on a
// latency slope).
func TestSynchronousLatencyIsTheRequestsOwn(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 200, PerPage: 10, Scenario: testserver.Scenario{Latency: 2 * time.Millisecond}})
	var ref refusals
	b := newBreaker(t, breaker.Config{Profile: breaker.Aggressive(), OnRefused: ref.hook})
	c := colly.NewCollector()
	b.Register(c)
	c.OnHTML("a.product-link, a.next", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	c.Visit(store.URL() + "/")
	if st := b.State(store.Host()); st != circuit.Closed || ref.len() != 0 {
		t.Fatalf("a healthy store crawled synchronously: circuit %s, %d refused; want closed, none", st, ref.len())
	}
	for _, s := range b.Stats() {
		if s.MedianLatency > 200*time.Millisecond {
			t.Errorf("median latency %v for pages served in about 2 ms", s.MedianLatency)
		}
	}
}

// TestRetryLoopAfterTheBreakerFetchesNoThrottledPageTwice: the user's
// OnError → Retry loop registered after the breaker, in a synchronous
// collector: the breaker's own re-send of a 429 runs nested in its
// OnError and is over before the user's Retry runs. That Retry must be
// dropped, not fetch the page a second time.
func TestRetryLoopAfterTheBreakerFetchesNoThrottledPageTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	store := startStore(t, testserver.Config{Products: 40,
		Scenario: testserver.Scenario{Mode: testserver.RateLimit, Rate: 60, Burst: 3}})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
	c := colly.NewCollector()
	b.Register(c)
	c.OnError(retryEveryError(3))
	for _, u := range productURLs(store, 40) {
		c.Visit(u)
	}
	if store.CountMode(testserver.RateLimit) == 0 {
		t.Fatal("the store never throttled: the test proves nothing")
	}
	if twice := okTwice(store); len(twice) > 0 {
		t.Fatalf("pages fetched ok twice: %v", twice)
	}
	if got := store.CountMode(testserver.Healthy); got != 40 {
		t.Fatalf("%d of 40 pages served", got)
	}
}

// TestSynchronousReSendEndsWithItsOwnOutcome: in a synchronous collector
// the breaker's re-send of a 429 is fetched inside Retry, which returns
// that fetch's error (here the page's 404). The URL is gone, not
// unfinished: the re-send left, and its outcome is the URL's.
func TestSynchronousReSendEndsWithItsOwnOutcome(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 5,
		Scenario: testserver.Scenario{Mode: testserver.Throttle, RetryAfter: time.Second, RecoverAfter: 300 * time.Millisecond}})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
	c := colly.NewCollector()
	b.Register(c)
	c.Visit(store.URL() + testserver.ProductPath(99)) // not in the catalogue: 404 once the store recovers
	if got := store.CountMode(testserver.Throttle); got != 1 {
		t.Fatalf("%d throttled answers, want 1", got)
	}
	if un := b.Unfinished().URLs; len(un) != 0 {
		t.Fatalf("unfinished %+v, want none: the re-send was answered 404", un)
	}
}
