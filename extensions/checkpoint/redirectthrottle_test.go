package checkpoint_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
)

// A link through a redirecting host to a page answered 429 once: the
// breaker sends it again and the page is collected, and the checkpoint
// says so of the URL the scraper visited (the redirecting one), with no
// record left pending.
func TestAThrottledRedirectTargetSettlesTheURLVisited(t *testing.T) {
	// In the Async crawl with the user's loop, the breaker's re-send and
	// the user's copy race to the callbacks, and either can be the one the
	// breaker drops: run it many times (chaos/SEEDS.md, seed
	// 18005781797060966430).
	cases := []struct{ async, userRetry bool }{{false, false}, {true, false}, {false, true}}
	for range 40 {
		cases = append(cases, struct{ async, userRetry bool }{true, true})
	}
	for _, tc := range cases {
		async := tc.async
		var throttled atomic.Int32
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if throttled.Add(1) == 1 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			w.Write([]byte("<html><body><h1>ok</h1></body></html>"))
		}))
		defer target.Close()
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
		}))
		defer redirector.Close()

		cp := openCP(t, dbPath(t))
		b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
		if err != nil {
			t.Fatal(err)
		}
		c := colly.NewCollector(colly.Async(async))
		if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 1}); err != nil {
			t.Fatal(err)
		}
		if err := breakwater.Use(c, b, cp); err != nil {
			t.Fatal(err)
		}
		if tc.userRetry {
			// A user's loop that retries every error, the 429 too: the
			// breaker's own re-send must stay the only one.
			var tries sync.Map
			c.OnError(func(r *colly.Response, _ error) {
				n, _ := tries.LoadOrStore(r.Request.URL.String(), new(atomic.Int32))
				if n.(*atomic.Int32).Add(1) <= 3 {
					r.Request.Retry()
				}
			})
		}
		var got atomic.Int32
		c.OnHTML("h1", func(*colly.HTMLElement) { got.Add(1) })
		c.Visit(redirector.URL + "/products/sku-1")
		c.Wait()
		if got.Load() != 1 || throttled.Load() != 2 {
			t.Fatalf("%+v: %d pages collected, the target asked %d times; want 1 and 2 (a 429, then the page)", tc, got.Load(), throttled.Load())
		}
		var left []string
		if err := cp.Store().Scan(func(r storage.Record) error {
			if r.State != storage.Done {
				left = append(left, r.URL+" "+r.State.String()+" "+r.LastError)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Errorf("%+v: records left unfinished after the page was collected: %s", tc, strings.Join(left, "; "))
		}
	}
}

// A link through a redirecting host into a store whose room is full (its
// listing holds the one request of its slow start while its callbacks
// run, past the client's timeout): the breaker sends the hop's URL again
// to the target, the page is collected once, and the checkpoint says so of
// the URL the scraper visited, with no record left pending or parked
// (chaos/SEEDS.md, seed 8427244820669173978).
func TestARedirectHopHeldForRoomSettlesTheURLVisited(t *testing.T) {
	for _, userRetry := range []bool{false, true} {
		var target, redirector *httptest.Server
		var products atomic.Int32
		target = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/" {
				w.Write([]byte(`<html><body><a class="p" href="` + redirector.URL + `/products/sku-1">p</a></body></html>`))
				return
			}
			products.Add(1)
			w.Write([]byte("<html><body><h1>ok</h1></body></html>"))
		}))
		defer target.Close()
		redirector = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
		}))
		defer redirector.Close()

		cp := openCP(t, dbPath(t))
		b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
		if err != nil {
			t.Fatal(err)
		}
		c := colly.NewCollector(colly.Async(true))
		c.SetRequestTimeout(300 * time.Millisecond)
		if err := breakwater.Use(c, b, cp); err != nil {
			t.Fatal(err)
		}
		if userRetry {
			var tries sync.Map
			c.OnError(func(r *colly.Response, _ error) {
				n, _ := tries.LoadOrStore(r.Request.URL.String(), new(atomic.Int32))
				if n.(*atomic.Int32).Add(1) <= 3 {
					r.Request.Retry()
				}
			})
		}
		var got atomic.Int32
		c.OnHTML("h1", func(*colly.HTMLElement) { got.Add(1) })
		c.OnHTML("a.p", func(e *colly.HTMLElement) {
			e.Request.Visit(e.Attr("href"))
			time.Sleep(400 * time.Millisecond) // outlasts the hop's timeout
		})
		c.Visit(target.URL + "/")
		c.Wait()
		if got.Load() != 1 || products.Load() != 1 {
			t.Fatalf("user retry %v: %d pages collected, the target served the product %d times; want 1 and 1", userRetry, got.Load(), products.Load())
		}
		var left []string
		if err := cp.Store().Scan(func(r storage.Record) error {
			if r.State != storage.Done {
				left = append(left, r.URL+" "+r.State.String()+" "+r.LastError)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Errorf("user retry %v: records left unfinished after the page was collected: %s", userRetry, strings.Join(left, "; "))
		}
	}
}

// An unregistered clone's link through a redirecting host to a page
// answered 429 once: the breaker gates the clone's requests at the
// transport and hands the throttled one back; the user's retry loop on
// the clone sends it again (Colly's Retry requests the redirect's
// target) and the page is collected. Nothing may stay listed or parked
// under the redirecting URL: the ending was tripped with nothing left
// (chaos/SEEDS.md, seeds 2360325850318196441 and 6792474706983209294).
func TestAClonesThrottledRedirectTargetLeavesNothingUnfinished(t *testing.T) {
	crawlClonesThrottledRedirect(t, false)
}

// The same with the clone registered with the checkpoint, as the README
// says (cp.Register(detail)), and not with the breaker: the user's
// retry of the throttled target made a record of its own for the
// target's URL, whose outcome the breaker reported under the URL
// visited, and it stayed in flight: the ending was tripped with nothing
// left (chaos/SEEDS.md, seed 6940743060595889517).
func TestARegisteredClonesThrottledRedirectTargetLeavesNothingInFlight(t *testing.T) {
	crawlClonesThrottledRedirect(t, true)
}

// crawlClonesThrottledRedirect has a clone of a wired collector, itself
// registered with the checkpoint if register, follow a link through a
// redirecting host to a page answered 429 once, with the user's retry
// loop on the clone, and checks that the page is collected and nothing is
// left listed by the breaker or unfinished in the checkpoint.
func crawlClonesThrottledRedirect(t *testing.T, register bool) {
	t.Helper()
	var throttled atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if throttled.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		w.Write([]byte("<html><body><h1>ok</h1></body></html>"))
	}))
	defer target.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
	}))
	defer redirector.Close()

	cp := openCP(t, dbPath(t))
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector()
	if err := breakwater.Use(c, b, cp); err != nil {
		t.Fatal(err)
	}
	detail := c.Clone() // gated at the shared transport
	if register {
		cp.Register(detail) // its URLs saved on it
	}
	var tries atomic.Int32
	detail.OnError(func(r *colly.Response, _ error) {
		if tries.Add(1) <= 3 {
			r.Request.Retry()
		}
	})
	var got atomic.Int32
	detail.OnHTML("h1", func(*colly.HTMLElement) { got.Add(1) })
	detail.Visit(redirector.URL + "/products/sku-1")
	detail.Wait()
	// The crawl's end: an unregistered clone's records (no callback of
	// the checkpoint's saw its Visits) are written as the run stops.
	if err := cp.Close(); err != nil {
		t.Fatal(err)
	}
	if got.Load() != 1 {
		t.Fatalf("%d pages collected, the target asked %d times; want 1 (a 429, then the page)", got.Load(), throttled.Load())
	}
	if u := b.Unfinished(); u.Total != 0 {
		t.Errorf("the page was collected, yet the breaker lists %+v", u.URLs)
	}
	var left []string
	if err := cp.Store().Scan(func(r storage.Record) error {
		if r.State != storage.Done {
			left = append(left, r.URL+" "+r.State.String()+" "+r.LastError)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("records left unfinished after the page was collected: %s", strings.Join(left, "; "))
	}
}

// A link through a redirecting host to a page that fails once (a 503):
// the user's retry loop sends it again (Colly's Retry requests the
// redirect's target) and the page is collected. The record of the URL
// the scraper visited is done, not left failed beside a new record for
// the target: the ending was tripped with nothing left (chaos/SEEDS.md,
// seed 2301345885953750024).
func TestARetriedRedirectTargetSettlesTheURLVisited(t *testing.T) {
	for _, async := range []bool{false, true} {
		var calls atomic.Int32
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				http.Error(w, "down for a moment", http.StatusServiceUnavailable)
				return
			}
			w.Write([]byte("<html><body><h1>ok</h1></body></html>"))
		}))
		defer target.Close()
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
		}))
		defer redirector.Close()

		cp := openCP(t, dbPath(t))
		b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
		if err != nil {
			t.Fatal(err)
		}
		c := colly.NewCollector(colly.Async(async))
		if err := breakwater.Use(c, b, cp); err != nil {
			t.Fatal(err)
		}
		c.OnError(breaker.RetryOnError(3))
		var got atomic.Int32
		c.OnHTML("h1", func(*colly.HTMLElement) { got.Add(1) })
		c.Visit(redirector.URL + "/products/sku-1")
		c.Wait()
		if got.Load() != 1 || calls.Load() != 2 {
			t.Fatalf("async %v: %d pages collected, the target asked %d times; want 1 and 2 (a 503, then the page)", async, got.Load(), calls.Load())
		}
		var left []string
		if err := cp.Store().Scan(func(r storage.Record) error {
			if r.State != storage.Done {
				left = append(left, r.URL+" "+r.State.String()+" "+r.LastError)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Errorf("async %v: records left unfinished after the page was collected: %s", async, strings.Join(left, "; "))
		}
	}
}

// A link through a redirecting host to a page that is gone (404), with
// Colly's CacheDir and a loop that retries every error: the first answer
// comes through the redirect, the loop's retries ask the target, the
// last ones are answered from Colly's cache. The URL visited is gone,
// and nothing is left pending (chaos/SEEDS.md, seed 14396527191052704840).
func TestAGoneRedirectTargetAnsweredFromTheCacheSettlesTheURLVisited(t *testing.T) {
	for _, async := range []bool{false, true} {
		var calls atomic.Int32
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			http.NotFound(w, r)
		}))
		defer target.Close()
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
		}))
		defer redirector.Close()

		cp := openCP(t, dbPath(t))
		b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
		if err != nil {
			t.Fatal(err)
		}
		c := colly.NewCollector(colly.Async(async), colly.CacheDir(t.TempDir()))
		if err := breakwater.Use(c, b, cp); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		tries := map[string]int{}
		c.OnError(func(r *colly.Response, _ error) {
			u := r.Request.URL.String()
			mu.Lock()
			tries[u]++
			n := tries[u]
			mu.Unlock()
			if n <= 3 {
				r.Request.Retry()
			}
		})
		c.Visit(redirector.URL + "/products/sku-1")
		c.Wait()
		var left []string
		if err := cp.Store().Scan(func(r storage.Record) error {
			if r.State != storage.Done && r.State != storage.Dead {
				left = append(left, r.URL+" "+r.State.String()+" "+r.LastError)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Errorf("async %v: records left unfinished for a page that is gone (the target asked %d times): %s", async, calls.Load(), strings.Join(left, "; "))
		}
	}
}
