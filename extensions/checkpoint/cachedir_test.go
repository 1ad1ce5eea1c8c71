package checkpoint_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
)

// With Colly's CacheDir, a user's loop that retries every error retries a
// 404 too, and Colly answers the retry from its cache: the request never
// leaves. Its record must say what the cached answer says (gone, or the
// page), not stay pending as a request stopped before it left: the run
// would end tripped with nothing left to do (chaos/SEEDS.md, seed
// 3572487800749844941).
func TestAnAnswerFromCollysCacheSettlesTheRecord(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body><a href="/missing">gone</a><a href="/p1">p1</a></body></html>`)
		case "/p1":
			fmt.Fprint(w, `<html><body><h1>p1</h1></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cp := openCP(t, dbPath(t))
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector(colly.Async(true))
	c.CacheDir = t.TempDir()
	// /p1 is held in the scraper's own OnRequest until /missing and its
	// retries are over: Colly marked /p1 visited, so the checkpoint holds
	// /missing's final record back until /p1's is written.
	missingDone := make(chan struct{})
	c.OnRequest(func(r *colly.Request) {
		if r.URL.Path == "/p1" {
			<-missingDone
		}
	})
	if err := breakwater.Use(c, b, cp); err != nil {
		t.Fatal(err)
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	var mu sync.Mutex
	tries := map[string]int{}
	c.OnError(func(r *colly.Response, _ error) { // retries every error, the 404 too
		mu.Lock()
		tries[r.Request.URL.Path]++
		n := tries[r.Request.URL.Path]
		mu.Unlock()
		if n <= 3 {
			r.Request.Retry() // answered from Colly's cache: the 404 again
		} else if r.Request.URL.Path == "/missing" {
			close(missingDone)
		}
	})
	c.Visit(srv.URL + "/")
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
	if len(left) > 0 || tries["/missing"] != 4 {
		t.Errorf("/missing answered %d times (want 4: once, then 3 retries from the cache); records left to do after the crawl: %s", tries["/missing"], strings.Join(left, "; "))
	}
}
