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

	b := newBreaker(t, breaker.Standard(), breaker.Config{Pacing: breaker.Pacing{MinGap: 120 * time.Millisecond}})
	c := colly.NewCollector(colly.Async(true))
	c.SetRequestTimeout(300 * time.Millisecond)
	b.Register(c)
	detail := c.Clone() // not registered: its requests wait for room at the transport
	var got atomic.Int32
	var mu sync.Mutex
	var errs []string
	detail.OnHTML("h1", func(*colly.HTMLElement) { got.Add(1) })
	detail.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, r.Request.URL.Path+": "+err.Error())
	})
	// Both hosts past their slow start: they have answered well.
	detail.Visit(redirector.URL + "/")
	detail.Visit(store.URL + "/p0")
	detail.Wait()
	got.Store(0)

	// The redirecting host's pace spaces the chains 120 ms apart: the
	// later ones wait there longer than the client's timeout, and reach
	// the store about as far apart, which makes them wait there for nothing.
	for i := 1; i <= products; i++ {
		detail.Visit(fmt.Sprintf("%s/r/p%d", redirector.URL, i))
	}
	detail.Wait()

	mu.Lock()
	defer mu.Unlock()
	if got.Load() != products || len(errs) > 0 {
		first := ""
		if len(errs) > 0 {
			first = errs[0]
		}
		t.Fatalf("%d of %d products collected, the store served %d; %d errors on a healthy store the breaker only paced (the first: %s)",
			got.Load(), products, served.Load()-1, len(errs), first)
	}
}
