package breaker_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A store that answers 403 to everything, crawled with a retry loop that
// retries every error: a 403 never counts against the circuit, so it
// received every URL, four times (a generated case sent one 2,806
// requests). Held after BlockedAfter 403s in a row, it receives at most
// BlockedAfter + P − 1; every URL is kept unfinished as blocked, and the
// ending is the error that says to fix the client.
func TestABlockedStoreIsHeldAfterBlockedAfterAnswers(t *testing.T) {
	for _, async := range []bool{false, true} {
		store := startStore(t, testserver.Config{Products: 60, PerPage: 60, Scenario: testserver.Scenario{Mode: testserver.Blocked, After: 1}})
		b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
		c := colly.NewCollector(colly.Async(async))
		const p = 4
		if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: p}); err != nil {
			t.Fatal(err)
		}
		b.Register(c)
		var refusals atomic.Int32
		c.OnError(func(r *colly.Response, err error) {
			if errors.Is(err, breaker.ErrOpen) {
				refusals.Add(1)
			}
		})
		c.OnError(retryEveryError(3))
		c.OnHTML("a.product-link", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
		c.Visit(store.URL() + "/")
		c.Wait()

		into := store.CountMode(testserver.Blocked)
		if bound := 10 + p - 1; into > bound {
			t.Errorf("async %v: the blocked store received %d blocked requests, want at most BlockedAfter + P − 1 = %d", async, into, bound)
		}
		u := b.Unfinished()
		if u.Total != 60 {
			t.Errorf("async %v: %d URLs unfinished, want the 60 products", async, u.Total)
		}
		o := outcome.Decide(0, b)
		if o.State != outcome.Error || !strings.Contains(o.Reason, "blocked: fix the client") || o.State.ExitCode() != 1 {
			t.Errorf("async %v: ending %s (%s, exit %d), want error: blocked: fix the client (exit 1)", async, o.State, o.Reason, o.State.ExitCode())
		}
		if refusals.Load() == 0 {
			t.Errorf("async %v: OnError saw no refusal", async)
		}
	}
}

// A 403 now and then, between pages that come back, holds nothing: the
// streak is of answers in a row.
func TestAnOccasional403HoldsNothing(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		w.Write(testserver.ProductPage(1))
	}))
	defer srv.Close()
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), BlockedAfter: 2})
	c := colly.NewCollector()
	b.Register(c)
	var got atomic.Int32
	c.OnHTML(testserver.TitleSelector, func(*colly.HTMLElement) { got.Add(1) })
	for i := 1; i <= 30; i++ {
		c.Visit(srv.URL + testserver.ProductPath(i))
	}
	if got.Load() != 20 || n.Load() != 30 {
		t.Fatalf("%d pages collected, %d requests at the server; want 20 and 30: every URL sent", got.Load(), n.Load())
	}
	if o := outcome.Decide(int64(got.Load()), b); o.State == outcome.Error {
		t.Fatalf("ending %s (%s), want no blocked hold", o.State, o.Reason)
	}
}

// A run of 403s is counted in the order the requests left. A synchronous
// collector records a page once its callbacks are over, after the links
// they visited were answered: that page's success, recorded late, does
// not end the run its own links began (a generated case sent 12 where the
// bound was 10).
func TestABlockedRunIsInTheOrderRequestsLeft(t *testing.T) {
	var forbidden atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			b := []byte(`<html><body><a href="/a">a</a>`)
			for i := 1; i <= 20; i++ {
				b = append(b, []byte(`<a href="/p`+strconv.Itoa(i)+`">p</a>`)...)
			}
			w.Write(append(b, "</body></html>"...))
		case r.URL.Path == "/a":
			w.Write([]byte(`<html><body><a href="/x1">1</a><a href="/x2">2</a><a href="/x3">3</a><a href="/x4">4</a><a href="/x5">5</a></body></html>`))
		default:
			forbidden.Add(1)
			http.Error(w, "forbidden", http.StatusForbidden)
		}
	}))
	defer srv.Close()
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
	c := colly.NewCollector()
	b.Register(c)
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	c.Visit(srv.URL + "/")
	if n := forbidden.Load(); n != 10 {
		t.Fatalf("the site answered 403 %d times, want 10 (BlockedAfter, one request at a time)", n)
	}
	if o := outcome.Decide(0, b); o.State != outcome.Error {
		t.Fatalf("ending %s (%s), want the blocked error", o.State, o.Reason)
	}
}

// A held domain's refusal points ahead, however long the run goes on: a
// queue that parks a refused URL until its RetryAt (storage/redis) would
// otherwise claim it again at once, be refused again, and never end (a
// generated case, 10264727326338181819, ran until torn down).
func TestABlockedDomainsRefusalAlwaysPointsAhead(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC))
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Clock: clk})
	for range 10 {
		tk, err := b.Allow("shop.test")
		if err != nil {
			t.Fatalf("refused before the hold: %v", err)
		}
		b.Record(tk, circuit.Result{Class: circuit.Blocked})
	}
	for _, ahead := range []time.Duration{0, breaker.Standard().Cooldown + time.Second, 10 * breaker.Standard().Cooldown} {
		clk.Advance(ahead)
		_, err := b.Allow("shop.test")
		var open *circuit.OpenError
		if !errors.As(err, &open) || !open.Blocked {
			t.Fatalf("after %v: %v, want the blocked hold's refusal", ahead, err)
		}
		if !open.RetryAt.After(clk.Now()) {
			t.Errorf("after %v: the refusal's RetryAt %v is not after now (%v): a queue parking the URL until then claims it again at once", ahead, open.RetryAt, clk.Now())
		}
	}
}

// A success that was already in flight when the first 403 of a run was
// recorded does not end the run, even if it left after that 403's request:
// requests in flight reach the server in any order, so it may have been
// answered before the site began refusing (a generated case,
// 7528176084478732239: the 200 of the request after the first 403, answered
// first and recorded late, restarted the count, and the store answered 13
// 403s against a bound of BlockedAfter + P − 1 = 12).
func TestASuccessInFlightAtTheFirst403DoesNotEndTheRun(t *testing.T) {
	release, slowArrived := make(chan struct{}), make(chan struct{})
	var forbidden, fastArrived atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			close(slowArrived)
			select {
			case <-release: // the 403 of /fast is recorded
			case <-time.After(5 * time.Second):
			}
			w.Write(testserver.ProductPage(1))
			return
		case "/ok":
			w.Write(testserver.ProductPage(1))
			return
		case "/fast":
			fastArrived.Add(1)
			select {
			case <-slowArrived: // /slow left after /fast, before its answer
			case <-time.After(5 * time.Second):
			}
		}
		forbidden.Add(1)
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	defer srv.Close()
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), BlockedAfter: 3})
	c := colly.NewCollector(colly.Async(true))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2}); err != nil {
		t.Fatal(err)
	}
	b.Register(c)
	var once sync.Once
	c.OnError(func(r *colly.Response, err error) {
		if r.Request.URL.Path == "/fast" {
			once.Do(func() { close(release) }) // the breaker's own OnError has recorded it
		}
	})
	c.Visit(srv.URL + "/ok") // past the slow start: room for two
	c.Wait()
	c.Visit(srv.URL + "/fast")
	for deadline := time.Now().Add(5 * time.Second); fastArrived.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) // /fast has its ticket before /slow asks for one
	}
	c.Visit(srv.URL + "/slow")
	c.Wait()
	for i := 1; i <= 5; i++ {
		c.Visit(srv.URL + "/p" + strconv.Itoa(i))
		c.Wait()
	}
	if n := forbidden.Load(); n != 3 {
		t.Fatalf("the site answered 403 %d times, want 3 (BlockedAfter): /slow's success was in flight when the run began", n)
	}
}
