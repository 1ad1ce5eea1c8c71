package breaker_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/gocolly/colly/v2"
)

// TestARedirectingHostsAnswersRecoverItsPace: a host throttled once, whose
// answers from then on are redirects to another host, answers well: each
// redirect is an answer like a page, and its pace steps back up after
// Recover of them, as it would after pages. A redirect's hop used to be
// recorded in the redirecting host's circuit only, past its pace: the host
// stayed at its throttled pace for the rest of the crawl.
func TestARedirectingHostsAnswersRecoverItsPace(t *testing.T) {
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><h1>product</h1></body></html>`)
	}))
	defer store.Close()
	var throttled atomic.Bool
	redir := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" && !throttled.Swap(true) {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		if r.URL.Path == "/busy" {
			fmt.Fprint(w, `<html><body><h1>listing</h1></body></html>`)
			return
		}
		http.Redirect(w, r, store.URL+strings.TrimPrefix(r.URL.Path, "/go"), http.StatusFound)
	}))
	defer redir.Close()
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{Parallelism: 4, Recover: 1}})
	c := colly.NewCollector()
	b.Register(c)
	var got atomic.Int32
	c.OnHTML("h1", func(*colly.HTMLElement) { got.Add(1) })
	host := strings.TrimPrefix(redir.URL, "http://")
	paceOf := func() observe.PaceStats {
		for _, s := range b.Stats() {
			if s.Domain == host {
				return s.Pace
			}
		}
		t.Fatalf("no stats for %s", host)
		return observe.PaceStats{}
	}
	c.Visit(redir.URL + "/busy")
	c.Wait()
	after := paceOf()
	if after.Pauses != 1 || after.Limit == 0 || after.Limit >= 4 {
		t.Fatalf("after a 429: %+v, want one pause and a limit under 4", after)
	}
	for i := range 4 {
		if err := c.Visit(fmt.Sprintf("%s/go/p%d", redir.URL, i)); err != nil {
			t.Fatalf("visit %d: %v", i, err)
		}
	}
	c.Wait()
	if got.Load() < 5 {
		t.Fatalf("%d pages collected, want the listing and 4 products", got.Load())
	}
	if now := paceOf(); now.Limit <= after.Limit && now.Gap >= after.Gap {
		t.Fatalf("after 4 redirects answered: pace %+v, the same as after the 429 (%+v): the redirects did not count as answers", now, after)
	}
}
