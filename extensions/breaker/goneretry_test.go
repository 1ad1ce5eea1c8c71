package breaker_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A user's retry loop that retries every error retries 404s too. When the
// crawl's context ends while such a retry waits, the URL it was for is
// still gone (its 404 came back): it is not work left, and the crawl that
// collected everything else is complete, not tripped (chaos seed
// 4400413705192669668: 47 such URLs listed unfinished, exit 2).
func TestCancelledRetryOfAGoneURLIsNotWorkLeft(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 1,
		Scenario: testserver.Scenario{Mode: testserver.Gone, After: 1}})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := colly.NewCollector(colly.StdlibContext(ctx))
	b.Register(c)
	var products atomic.Int32
	c.OnRequest(func(r *colly.Request) {
		if r.URL.Path == testserver.ProductPath(1) && products.Add(1) == 2 {
			cancel() // the crawl ends as the retry is about to leave
		}
	})
	c.OnHTML(testserver.ProductLinkSelector, func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	c.OnError(func(r *colly.Response, err error) {
		if products.Load() < 2 {
			_ = r.Request.Retry() // once: the user's loop, bounded
		}
	})
	_ = c.Visit(store.URL())
	if n := store.CountPath(testserver.ProductPath(1)); n != 1 {
		t.Fatalf("the product was requested %d times, want 1 (a 404, its retry cut): the test proves nothing", n)
	}
	if products.Load() != 2 {
		t.Fatalf("the product's retry never reached OnRequest: the test proves nothing")
	}
	if u := b.Unfinished().URLs; len(u) != 0 {
		t.Errorf("unfinished %+v: a cancelled retry of a URL that answered 404 is no work left", u)
	}
	if o := outcome.Decide(1, b); o.State != outcome.Complete {
		t.Errorf("outcome %s (%s), want complete", o.State, o.Reason)
	}
}
