package breaker_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// TestStopGateBeforeTheBreakerDoesNotStall: a user's stop gate registered
// before the breaker aborts every request in OnRequestHeaders once the run
// is stopping (productcrawl's interrupt): the crawl ends at once.
func TestStopGateBeforeTheBreakerDoesNotStall(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 200})
	var stopping atomic.Bool
	var n atomic.Int32
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{Parallelism: 2}})
	c := colly.NewCollector(colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2})
	gate := func(r *colly.Request) {
		if stopping.Load() {
			r.Abort()
		}
	}
	c.OnRequest(gate)
	c.OnRequestHeaders(gate)
	c.OnScraped(func(*colly.Response) {
		if n.Add(1) == 9 {
			stopping.Store(true)
		}
	})
	b.Register(c)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, u := range productURLs(store, 200) {
			c.Visit(u)
		}
		c.Wait()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the crawl did not end within 10 s of a stop gate aborting everything (%d requests sent)", store.Count())
	}
}
