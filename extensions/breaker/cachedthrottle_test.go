package breaker_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A 429 in Colly's CacheDir (left by a crawl stopped before the breaker
// took it out, or made without the breaker) is answered to OnError with no
// request: the breaker forgets it and sends the URL again past the cache,
// and the user's retry loop sends its own copy. The copy is dropped, as
// after a 429 from the site: the page is fetched and scraped once
// (chaos/SEEDS.md, seed 5358536888424136307).
func TestACachedThrottlesRetryCopyIsDropped(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			store := startStore(t, testserver.Config{Products: 1, PerPage: 1, Scenario: testserver.Scenario{Mode: testserver.Throttle, RecoverAfter: 100 * time.Millisecond}})
			dir, u := t.TempDir(), store.ProductURL(1)
			if err := colly.NewCollector(colly.CacheDir(dir)).Visit(u); err == nil {
				t.Fatal("the store did not throttle the first request")
			}
			time.Sleep(200 * time.Millisecond) // recovered; the 429 stays cached
			asked := store.Count()

			c := colly.NewCollector(colly.CacheDir(dir), colly.Async(async))
			newBreaker(t, breaker.Config{Profile: breaker.Standard()}).Register(c)
			var got atomic.Int32
			c.OnHTML(testserver.TitleSelector, func(*colly.HTMLElement) { got.Add(1) })
			var mu sync.Mutex
			tries := 0
			c.OnError(func(r *colly.Response, _ error) { // the user's loop: every error, 3 times
				mu.Lock()
				tries++
				n := tries
				mu.Unlock()
				if n <= 3 {
					_ = r.Request.Retry()
				}
			})
			_ = c.Visit(u)
			c.Wait()
			if got.Load() != 1 || store.Count()-asked != 1 {
				t.Fatalf("the product scraped %d times, the store asked %d times; want 1 and 1", got.Load(), store.Count()-asked)
			}
		})
	}
}
