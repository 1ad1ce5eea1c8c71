package breaker_test

import (
	"testing"
	"time"

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
	b := newBreaker(t, breaker.Standard, breaker.WithPacing(breaker.Pacing{Parallelism: 1}))
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
