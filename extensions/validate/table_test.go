package validate_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/breakwater-crawl/breakwater/extensions/validate"
)

// TestStateIsPerRequestNotPerCtx: a listing visits its products with
// e.Request.Visit, so parent and children share one Ctx, and under Async
// they are scored at the same time. Each must get its own verdict.
func TestStateIsPerRequestNotPerCtx(t *testing.T) {
	const n = 60
	s := newSite()
	ns := make([]int, n)
	for i := range n {
		ns[i] = i + 1
		if i%3 == 0 {
			s.set(fmt.Sprintf("/products/sku-%d", i+1), reply{body: restyled(i+1, 8000)})
		} else {
			s.set(fmt.Sprintf("/products/sku-%d", i+1), reply{body: product(i+1, 8000)})
		}
	}
	s.set("/list/1", reply{body: listing(4000, ns...)})
	v := mustNew(t, validate.Config{
		Pages: []validate.Page{
			{Pattern: `/list/`, Checks: []validate.Check{validate.Require("a.product-link")}},
			{Pattern: `/products/`, Checks: []validate.Check{validate.Require(titleSel, priceSel)}},
		},
	})
	c := collector(s, v, colly.Async(true))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
		t.Fatal(err)
	}
	vs := collect(t, c, v)
	var ctxs atomic.Int64
	c.OnHTML("a.product-link", func(e *colly.HTMLElement) {
		e.Request.Ctx.Put("parent", e.Request.URL.Path)
		if err := e.Request.Visit(e.Attr("href")); err != nil {
			t.Error(err)
		}
	})
	c.OnScraped(func(r *colly.Response) {
		if r.Ctx.Get("parent") == "/list/1" {
			ctxs.Add(1)
		}
	})
	if err := c.Visit("http://shop.test/list/1"); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	if ctxs.Load() != n+1 {
		t.Fatalf("%d responses saw the parent's Ctx, want %d: the test no longer shares a Ctx", ctxs.Load(), n+1)
	}
	if got, _ := vs.get("/list/1"); !got.Valid() || got.Rule != "/list/" {
		t.Errorf("listing: rule %q reasons %q", got.Rule, texts(got))
	}
	for i := range n {
		path := fmt.Sprintf("/products/sku-%d", i+1)
		got, ok := vs.get(path)
		if !ok {
			t.Fatalf("%s not scored", path)
		}
		if wantValid := i%3 != 0; got.Valid() != wantValid || got.Rule != "/products/" {
			t.Errorf("%s: rule %q reasons %q, want valid %v", path, got.Rule, texts(got), wantValid)
		}
	}
}

// TestStateIsReleasedWhenRequestsAreGarbage: the side table keys by weak
// pointer and deletes by runtime cleanup, so after a crawl nothing stays.
func TestStateIsReleasedWhenRequestsAreGarbage(t *testing.T) {
	s := newSite()
	for i := range 200 {
		s.set(fmt.Sprintf("/p/%d", i), reply{body: product(i, 2000)})
	}
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	c := collector(s, v, colly.Async(true))
	var valid, held atomic.Int64
	c.OnScraped(func(r *colly.Response) {
		if v.Live() > 0 {
			held.Add(1) // at least this request's state is in the table
		}
		if verdict, _ := v.VerdictOf(r); verdict.Valid() {
			valid.Add(1)
		}
	})
	for i := range 200 {
		if err := c.Visit(fmt.Sprintf("http://shop.test/p/%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	c.Wait()
	if valid.Load() != 200 {
		t.Fatalf("%d valid pages, want 200", valid.Load())
	}
	if held.Load() != 200 {
		t.Fatalf("the table was empty while %d of 200 pages were scraped", 200-held.Load())
	}
	deadline := time.Now().Add(5 * time.Second)
	for v.Live() > 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine
	}
	if n := v.Live(); n != 0 {
		t.Fatalf("%d request states still held after the crawl and GC", n)
	}
}

// TestStateLivesAsLongAsItsRequest: a response kept by the user after the
// crawl still has its verdict, however many collections ran since, while
// the states of the requests nobody kept go.
func TestStateLivesAsLongAsItsRequest(t *testing.T) {
	s := newSite()
	for i := range 100 {
		s.set(fmt.Sprintf("/p/%d", i), reply{body: product(i, 2000)})
	}
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	c := collector(s, v)
	var kept *colly.Response
	c.OnScraped(func(r *colly.Response) {
		if r.Request.URL.Path == "/p/7" {
			kept = r
		}
	})
	for i := range 100 {
		if err := c.Visit(fmt.Sprintf("http://shop.test/p/%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for v.Live() > 1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := v.Live(); n != 1 {
		t.Fatalf("%d request states held after the crawl and GC, want the one kept", n)
	}
	if verdict, ok := v.VerdictOf(kept); !ok || !verdict.Valid() || verdict.URL != "http://shop.test/p/7" {
		t.Fatalf("kept response: verdict %+v, found %v", verdict, ok)
	}
	runtime.KeepAlive(kept)
}

// TestIdleValidatorHoldsNoDeadState: once a crawl stops, the states of its
// requests go with the requests, though no new request comes to sweep the
// table: a broad crawl left idle keeps no page per request it made.
func TestIdleValidatorHoldsNoDeadState(t *testing.T) {
	const n = 3000 // past the table's first sweep
	s := newSite()
	s.set("/p", reply{body: product(1, 2000)})
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	c := collector(s, v)
	var valid int
	c.OnScraped(func(r *colly.Response) {
		if verdict, _ := v.VerdictOf(r); verdict.Valid() {
			valid++
		}
	})
	for i := range n {
		if err := c.Visit(fmt.Sprintf("http://shop-%d.test/p", i)); err != nil {
			t.Fatal(err)
		}
	}
	if valid != n {
		t.Fatalf("%d valid pages, want %d", valid, n)
	}
	deadline := time.Now().Add(2 * time.Second)
	for v.Held() > 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine
	}
	if h := v.Held(); h != 0 {
		t.Fatalf("%d entries held in the request table after the crawl and GC, want 0", h)
	}
}

// TestValidatorIsCollected: the table's sweep after each collection does
// not keep a validator nobody holds alive.
func TestValidatorIsCollected(t *testing.T) {
	var gone atomic.Bool
	func() {
		s := newSite()
		s.set("/p", reply{body: product(1, 2000)})
		v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
		c := collector(s, v)
		if err := c.Visit("http://shop.test/p"); err != nil {
			t.Fatal(err)
		}
		runtime.AddCleanup(v, func(*atomic.Bool) { gone.Store(true) }, &gone)
	}()
	deadline := time.Now().Add(2 * time.Second)
	for !gone.Load() && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if !gone.Load() {
		t.Fatal("a validator nobody holds was never collected")
	}
}
