package checkpoint_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

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
	for _, async := range []bool{false, true} {
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
		b, err := breaker.New(breaker.Standard())
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
		var got atomic.Int32
		c.OnHTML("h1", func(*colly.HTMLElement) { got.Add(1) })
		c.Visit(redirector.URL + "/products/sku-1")
		c.Wait()
		if got.Load() != 1 || throttled.Load() != 2 {
			t.Fatalf("async=%v: %d pages collected, the target asked %d times; want 1 and 2 (a 429, then the page)", async, got.Load(), throttled.Load())
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
			t.Errorf("async=%v: records left unfinished after the page was collected: %s", async, strings.Join(left, "; "))
		}
	}
}
