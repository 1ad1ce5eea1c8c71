package breaker_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/gocolly/colly/v2"
)

// A clone (not registered) follows product links through a redirecting
// host. Its requests wait for the redirecting host's pace at the
// breaker's transport, inside the client's Timeout, and patientRequest
// moves the first hop's deadline on by that wait; but net/http's Client
// gives the redirect's next hop the chain's first deadline, already past
// for a first hop that waited about the whole timeout. The hop failed at
// once ("context deadline exceeded", nothing sent), was counted as the
// target's failure, and ten of them opened a healthy store's circuit
// (chaos/SEEDS.md, seed 7198215812936100601). Each hop starts from the
// deadline its previous hop was given.
func TestACloneRedirectHopKeepsTheTimeItsFirstHopWaitedFor(t *testing.T) {
	const products = 6
	var served atomic.Int32
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		fmt.Fprint(w, `<html><body><h1>product</h1></body></html>`)
	}))
	defer store.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			fmt.Fprint(w, "ok")
			return
		}
		http.Redirect(w, r, store.URL+strings.TrimPrefix(r.URL.Path, "/r"), http.StatusFound)
	}))
	defer redirector.Close()

	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{MinGap: 120 * time.Millisecond}})
	c := colly.NewCollector(colly.Async(true))
	c.SetRequestTimeout(300 * time.Millisecond)
	b.Register(c)
	detail := c.Clone() // not registered: its requests wait for room at the transport
	got := tallyClone(detail)
	// Both hosts past their slow start: they have answered well.
	detail.Visit(redirector.URL + "/")
	detail.Visit(store.URL + "/p0")
	detail.Wait()
	got.reset()

	// The redirecting host's pace spaces the chains 120 ms apart: the
	// later ones wait there longer than the client's timeout, and reach
	// the store about as far apart, which makes them wait there for nothing.
	for i := 1; i <= products; i++ {
		detail.Visit(fmt.Sprintf("%s/r/p%d", redirector.URL, i))
	}
	detail.Wait()

	got.check(t, products, int(served.Load())-1, "errors on a healthy store the breaker only paced")
}

// cloneTally counts what a clone collects (its pages' h1) and the errors
// its OnError sees.
type cloneTally struct {
	got  atomic.Int32
	mu   sync.Mutex
	errs []string
}

func tallyClone(c *colly.Collector) *cloneTally {
	ct := &cloneTally{}
	c.OnHTML("h1", func(*colly.HTMLElement) { ct.got.Add(1) })
	c.OnError(func(r *colly.Response, err error) {
		ct.mu.Lock()
		defer ct.mu.Unlock()
		ct.errs = append(ct.errs, r.Request.URL.Path+": "+err.Error())
	})
	return ct
}

// reset forgets the pages collected so far (a warm-up's); its errors
// stay, and fail check.
func (ct *cloneTally) reset() { ct.got.Store(0) }

// check fails t unless want pages were collected and no error seen; served
// is what the store served, for the message; what names the errors.
func (ct *cloneTally) check(t *testing.T, want, served int, what string) {
	t.Helper()
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if int(ct.got.Load()) != want || len(ct.errs) > 0 {
		first := ""
		if len(ct.errs) > 0 {
			first = ct.errs[0]
		}
		t.Fatalf("%d of %d products collected, the store served %d; %d %s (the first: %s)",
			ct.got.Load(), want, served, len(ct.errs), what, first)
	}
}
