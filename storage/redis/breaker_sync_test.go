package redis_test

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// TestSynchronousCollectorOnASharedStoreKeepsTheTripBound: a synchronous
// collector follows a listing chain (each page links to its products and to
// the next page) from inside its callbacks, so every listing page's outcome
// is recorded after the whole rest of the chain. The store starts failing
// two products before the end of the 25th listing page: three failures (two
// products and the 26th listing page), then the 25 listing pages' late
// successes as the chain unwinds, then the user's second pass over every
// product URL (a sitemap), which sends into the failing store until the
// trip. The late successes were answered before the failures; a window kept
// in the order requests left lets them push none out, so no more than
// FailuresToTrip requests reach the failing store (the bound with one
// request in flight), through the in-process circuit and through a shared
// Redis breaker store alike. Counted from the store's own log.
func TestSynchronousCollectorOnASharedStoreKeepsTheTripBound(t *testing.T) {
	p := breaker.Standard()
	need := p.Settings().FailuresToTrip()
	const perPage, products, chain = 10, 400, 25
	// Listing page L is request (L−1)·(perPage+1)+1, its products the next
	// perPage: the failures start at the chain-th page's second-to-last.
	after := (chain-1)*(perPage+1) + perPage - 1
	stores := map[string]func(t *testing.T) circuit.Store{
		"in-process": func(*testing.T) circuit.Store { return nil },
		"shared redis": func(t *testing.T) circuit.Store {
			client, prefix := redistest.New(t)
			bs, err := redis.NewBreakerStore(client, "sync", redis.Config{Namespace: prefix})
			if err != nil {
				t.Fatal(err)
			}
			return bs
		},
	}
	for _, name := range []string{"in-process", "shared redis"} {
		t.Run(name, func(t *testing.T) {
			store, err := testserver.Start(testserver.Config{Products: products, PerPage: perPage,
				Scenario: testserver.Scenario{Mode: testserver.Degrade, After: after}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			cfg := breaker.Config{Profile: p}
			if st := stores[name](t); st != nil {
				cfg.Store = st
			}
			b, err := breaker.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := colly.NewCollector() // synchronous
			b.Register(c)
			c.OnHTML(testserver.ProductLinkSelector+", "+testserver.NextSelector, func(e *colly.HTMLElement) {
				_ = e.Request.Visit(e.Attr("href"))
			})
			_ = c.Visit(store.URL() + "/")
			for n := 1; n <= products; n++ { // the second pass: a sitemap's products
				_ = c.Visit(store.ProductURL(n))
			}
			got := store.SentAfterFailing()
			t.Logf("%s: %d requests reached the store, %d of them after it began failing (bound %d)", name, store.Count(), got, need)
			if got != need {
				t.Errorf("%s: %d requests into the failing store, want %d (FailuresToTrip, one request in flight)", name, got, need)
			}
			if st := b.State(store.Host()); st != circuit.Open {
				t.Errorf("%s: circuit %s, want open", name, st)
			}
		})
	}
}
