package checkpoint_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/gocolly/colly/v2"
)

// Colly asks its storage IsVisited and then calls Visited: two calls, so
// two goroutines that find the same link at once can both be told it is
// new. With the checkpoint as the storage a URL is fetched once however
// many pages link to it, or redirect to it, at the same moment. Counted
// at the server.
func TestALinkFoundByManyPagesAtOnceIsFetchedOnce(t *testing.T) {
	const pages = 120
	var target atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, "<html><body>")
			for i := range pages {
				fmt.Fprintf(w, `<a href="/p/%d">p</a>`, i)
			}
			fmt.Fprint(w, "</body></html>")
		case "/redirect":
			http.Redirect(w, r, "/target", http.StatusFound)
		case "/target":
			target.Add(1)
			fmt.Fprint(w, `<html><body>the page every page links to</body></html>`)
		default:
			fmt.Fprint(w, `<html><body><a href="/target">t</a><a href="/redirect">r</a></body></html>`)
		}
	}))
	defer srv.Close()
	for round := range 3 {
		target.Store(0)
		// A store slow to answer Get widens the moment between the two
		// calls, as a loaded machine does.
		cp, err := checkpoint.New(slowGet{memory.New()}, checkpoint.Config{})
		if err != nil {
			t.Fatal(err)
		}
		c := colly.NewCollector(colly.Async(true))
		if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 32}); err != nil {
			t.Fatal(err)
		}
		cp.Register(c)
		c.OnHTML("a", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
		_ = c.Visit(srv.URL + "/")
		c.Wait()
		if n := target.Load(); n != 1 {
			t.Fatalf("round %d: /target served %d times to one crawl, want once", round, n)
		}
		if err := cp.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// slowGet is a store whose Get takes a millisecond.
type slowGet struct{ storage.Store }

func (s slowGet) Get(id uint64) (storage.Record, bool, error) {
	time.Sleep(time.Millisecond)
	return s.Store.Get(id)
}
