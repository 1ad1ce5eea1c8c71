package checkpoint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// usageRun is the README's Usage (examples/usage) with colly.CacheDir(cache)
// on its collector: it crawls from start, checkpointed in the file ckpt,
// and returns the products it wrote, each time it wrote them, and the
// exit code outcome.Decide gives. extra, if any, adds the caller's own
// callbacks after the Usage's.
func usageRun(t *testing.T, start, ckpt, cache string, extra ...func(*colly.Collector)) (map[string]int, int, outcome.Outcome) {
	t.Helper()
	c := colly.NewCollector(colly.Async(true), colly.CacheDir(cache))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})
	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.MinBytes(0), validate.Require("ul.products")},
		Pages: []validate.Page{
			{Pattern: `/products/`, Checks: []validate.Check{validate.MinBytes(1024), validate.Require("div.product h1.title")}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(ckpt, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cp, err := checkpoint.New(st, checkpoint.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if err := breakwater.Use(c, v, b, cp); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	written := map[string]int{}
	var records int64
	c.OnHTML("div.product", func(e *colly.HTMLElement) {
		mu.Lock()
		defer mu.Unlock()
		written[e.Request.URL.Path]++
		records++
	})
	c.OnHTML("a.product-link, a.next", func(e *colly.HTMLElement) {
		if err := e.Request.Visit(e.Attr("href")); err != nil {
			b.NotVisited(e.Request.AbsoluteURL(e.Attr("href")), err)
		}
	})
	c.OnError(breaker.RetryOnError(3))
	for _, f := range extra {
		f(c)
	}
	if _, err := cp.Resume(c); err != nil {
		t.Fatal(err)
	}
	if err := c.Visit(start); err != nil {
		b.NotVisited(start, err)
	}
	c.Wait()
	o := outcome.Decide(records, v, b, cp)
	cp.SetOutcome(o)
	return written, o.State.ExitCode(), o
}

// The Usage with Colly's CacheDir: run 1 fetches the store and ends
// complete; with the checkpoint deleted, run 2 is answered wholly from
// the warm cache (nothing sent) and must still settle every URL: it ends
// complete, each product written once. Run 3 keeps run 2's checkpoint:
// nothing to send, nothing new to write, complete. Before, every cached
// answer stayed pending in the checkpoint, and every run after the first
// ended tripped with the whole crawl "left", writing every product again.
func TestUsageWithCacheDirCompletesFromAWarmCache(t *testing.T) {
	const products = 30
	store := startStore(t, testserver.Config{Products: products, PerPage: 10})
	ckpt, cache := dbPath(t), t.TempDir()
	start := store.URL() + "/"
	wantAll := func(run int, written map[string]int) {
		t.Helper()
		var bad []string
		for n := 1; n <= products; n++ {
			if p := testserver.ProductPath(n); written[p] != 1 {
				bad = append(bad, fmt.Sprintf("%s ×%d", p, written[p]))
			}
		}
		if len(bad) > 0 || len(written) != products {
			t.Errorf("run %d: %d products written, want each of %d once; off: %v", run, len(written), products, bad)
		}
	}

	written, code, o := usageRun(t, start, ckpt, cache)
	sent1 := store.Count()
	if code != 0 {
		t.Fatalf("run 1 (cold cache): exit %d (%s: %s), want 0", code, o.State, o.Reason)
	}
	wantAll(1, written)

	if err := os.Remove(ckpt); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(ckpt + "*"); len(m) > 0 {
		t.Fatalf("checkpoint files left after deleting it: %v", m)
	}
	written, code, o = usageRun(t, start, ckpt, cache)
	if sent := store.Count() - sent1; sent != 0 {
		t.Errorf("run 2 (warm cache, no checkpoint): %d requests reached the store, want 0", sent)
	}
	if code != 0 {
		t.Errorf("run 2 (warm cache, no checkpoint): exit %d (%s: %s), want 0", code, o.State, o.Reason)
	}
	wantAll(2, written)

	written, code, o = usageRun(t, start, ckpt, cache)
	if sent := store.Count() - sent1; sent != 0 {
		t.Errorf("run 3 (checkpoint kept): %d requests reached the store over runs 2 and 3, want 0", sent)
	}
	if code != 0 || len(written) != 0 {
		t.Errorf("run 3 (checkpoint kept): exit %d (%s: %s), %d products written; want 0 and none", code, o.State, o.Reason, len(written))
	}
}

// A user's loop that clears what Colly's cache holds for a URL and
// retries it still fetches it: run 1 caches 404s for the products the
// store had lost; the store has them again, the checkpoint is deleted, and
// in run 2 each cached 404 reaches the loop (after settling its URL gone),
// whose Retry goes to the store past the emptied cache. Every product is
// written once, only the lost ones are fetched, and the run is complete.
func TestAUsersLoopThatClearsCollysCacheRefetchesTheURL(t *testing.T) {
	const products = 10
	store := startStore(t, testserver.Config{Products: products, PerPage: products,
		Scenario: testserver.Scenario{Mode: testserver.Gone, After: 4}})
	ckpt, cache := dbPath(t), t.TempDir()
	start := store.URL() + "/"
	usageRun(t, start, ckpt, cache)
	lost := 0
	for _, h := range store.Requests() {
		if h.Status == 404 {
			lost++
		}
	}
	if lost == 0 {
		t.Fatalf("run 1: no product answered 404; requests: %+v", store.Requests())
	}
	if err := store.SetScenario(testserver.Scenario{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ckpt); err != nil {
		t.Fatal(err)
	}
	sent1 := store.Count()
	var mu sync.Mutex
	cleared := map[string]int{}
	written, code, o := usageRun(t, start, ckpt, cache, func(c *colly.Collector) {
		c.OnError(func(r *colly.Response, _ error) {
			if r.StatusCode != 404 {
				return
			}
			u := r.Request.URL.String()
			mu.Lock()
			cleared[u]++
			n := cleared[u]
			mu.Unlock()
			if n == 1 && os.Remove(collyx.CacheFile(cache, u)) == nil {
				_ = r.Request.Retry()
			}
		})
	})
	if sent := store.Count() - sent1; sent != lost || len(cleared) != lost {
		t.Errorf("run 2: %d requests reached the store, %d cached 404s reached the loop; want %d of each (the products lost in run 1)", sent, len(cleared), lost)
	}
	for n := 1; n <= products; n++ {
		if p := testserver.ProductPath(n); written[p] != 1 {
			t.Errorf("run 2: %s written %d times, want once", p, written[p])
		}
	}
	if code != 0 {
		t.Errorf("run 2: exit %d (%s: %s), want 0", code, o.State, o.Reason)
	}
}

// Without a breaker the checkpoint settles an answer of Colly's cache
// itself: a fresh checkpoint over a warm cache ends with every URL done.
func TestACheckpointAloneSettlesCollysCachedAnswers(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 5, PerPage: 5})
	cache := t.TempDir()
	crawl := func(c *colly.Collector) {
		c.OnHTML(testserver.ProductLinkSelector, func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
		_ = c.Visit(store.URL() + "/")
		c.Wait()
	}
	crawl(colly.NewCollector(colly.CacheDir(cache)))
	asked := store.Count()
	cp := openCP(t, dbPath(t))
	c := colly.NewCollector(colly.Async(true), colly.CacheDir(cache))
	cp.Register(c)
	crawl(c)
	if n := store.Count() - asked; n != 0 {
		t.Fatalf("%d requests reached the store, want 0", n)
	}
	if got := counts(t, cp); got[storage.Done] != 6 || len(got) != 1 {
		t.Errorf("records by state %v, want 6 done (a listing, 5 products) and nothing else", got)
	}
}
