package checkpoint_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A product throttled in a run that was then stopped stays in Colly's
// CacheDir as a 429 (a clone's request, which the breaker does not
// register, is never taken out of it), and the checkpoint keeps the URL
// to do. The program then registers the clone and hands it those URLs
// (Adopt); the resume re-drives them on it, Colly answers from the cache, and two
// requests leave for the one URL: the breaker's re-send past the cache and
// the user's retry loop's copy. Each is answered whole, and the product is
// written twice (chaos/SEEDS.md, seed 5358536888424136307). Across both
// runs every product is written once.
func TestAResumedURLWhoseThrottleCollyCachedIsWrittenOnce(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(map[bool]string{false: "sync", true: "async"}[async], func(t *testing.T) {
			store := startStore(t, testserver.Config{Products: 3, PerPage: 3, Scenario: testserver.Scenario{
				Mode: testserver.Throttle, After: 1, RetryAfter: time.Second, RecoverAfter: 300 * time.Millisecond}})
			path, cache := dbPath(t), t.TempDir()
			var mu sync.Mutex
			written := map[string]int{}
			run := func(ctx context.Context, resume bool) {
				cp := openCP(t, path)
				b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
				if err != nil {
					t.Fatal(err)
				}
				c := colly.NewCollector(colly.Async(async), colly.CacheDir(cache), colly.StdlibContext(ctx))
				if err := breakwater.Use(c, b, cp); err != nil {
					t.Fatal(err)
				}
				detail := c.Clone() // Colly's _examples/coursera_courses: nothing registered on it
				if resume {
					// Registered now, and handed the URLs it asked for unregistered.
					if err := breakwater.Use(detail, b, cp); err != nil {
						t.Fatal(err)
					}
					if err := cp.Adopt(detail); err != nil {
						t.Fatal(err)
					}
				}
				title := func(e *colly.HTMLElement) {
					mu.Lock()
					written[e.Request.URL.Path]++
					mu.Unlock()
				}
				tries := map[string]int{}
				retry := func(r *colly.Response, _ error) { // the user's loop: every error, 3 times
					mu.Lock()
					tries[r.Request.URL.String()]++
					n := tries[r.Request.URL.String()]
					mu.Unlock()
					if n <= 3 {
						_ = r.Request.Retry()
					}
				}
				for _, col := range []*colly.Collector{c, detail} {
					col.OnHTML(testserver.TitleSelector, title)
					col.OnError(retry)
				}
				c.OnHTML(testserver.ProductLinkSelector, func(e *colly.HTMLElement) {
					_ = detail.Visit(e.Request.AbsoluteURL(e.Attr("href")))
				})
				if resume {
					if _, err := cp.Resume(c); err != nil {
						t.Fatal(err)
					}
				}
				_ = c.Visit(store.URL() + "/")
				c.Wait()
				detail.Wait()
				if err := closeCP(cp); err != nil {
					t.Fatal(err)
				}
			}
			// Run 1: every product answers 429, the clone's retries are
			// answered from the cache, and the run is stopped during the
			// breaker's pause.
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			run(ctx, false)
			cancel()
			time.Sleep(time.Second) // the pause is over, the store has recovered
			run(context.Background(), true)
			mu.Lock()
			defer mu.Unlock()
			for i := 1; i <= 3; i++ {
				p := "/products/sku-" + string(rune('0'+i))
				if written[p] != 1 {
					t.Errorf("%s written %d times across the runs, want once (all: %v)", p, written[p], written)
				}
			}
		})
	}
}
