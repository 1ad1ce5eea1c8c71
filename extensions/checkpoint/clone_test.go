package checkpoint_test

import (
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// stateOf returns the state the checkpoint's store holds for each URL.
func statesOf(t *testing.T, st storage.Store) map[string]storage.State {
	t.Helper()
	out := map[string]storage.State{}
	if err := st.Scan(func(r storage.Record) error {
		u, err := url.Parse(r.URL)
		if err != nil {
			return err
		}
		out[u.Path] = r.State
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCloneAndCapLeaveNothingOutOfTheCheckpoint: product pages fetched
// through a clone of the collector (Colly's Clone copies none of the
// checkpoint's callbacks) and URLs a MaxRequests cap refused are in the
// checkpoint, to be fetched by the next run: nothing the crawl did not
// finish is missing from it.
func TestCloneAndCapLeaveNothingOutOfTheCheckpoint(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 60, PerPage: 10, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 20}})
	st := memory.New()
	cp, err := checkpoint.New(st, checkpoint.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Observe(b); err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector()
	c.MaxRequests = 40
	breakwater.Use(c, b, cp)
	detail := c.Clone()
	var mu sync.Mutex
	written := map[string]bool{}
	capped := map[string]bool{} // paths the cap refused
	notVisited := func(u string, err error) {
		if b.NotVisited(u, err) {
			pu, _ := url.Parse(u)
			mu.Lock()
			capped[pu.Path] = true
			mu.Unlock()
		}
	}
	detail.OnHTML("div.product", func(e *colly.HTMLElement) {
		mu.Lock()
		written[e.Request.URL.Path] = true
		mu.Unlock()
	})
	c.OnHTML("a.next", func(e *colly.HTMLElement) {
		if err := e.Request.Visit(e.Attr("href")); err != nil {
			notVisited(e.Request.AbsoluteURL(e.Attr("href")), err)
		}
	})
	c.OnHTML("a.product-link", func(e *colly.HTMLElement) {
		u := e.Request.AbsoluteURL(e.Attr("href"))
		if err := detail.Visit(u); err != nil {
			notVisited(u, err)
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Visit(store.URL() + "/")
		c.Wait()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the crawl did not end within 20s")
	}
	if err := cp.Flush(); err != nil {
		t.Fatal(err)
	}
	states := statesOf(t, st)
	// Every page the store was asked for or linked to and not written is
	// in the checkpoint, not done.
	asked := map[string]bool{}
	for _, h := range store.Requests() {
		asked[h.Path] = true
	}
	var lost []string
	for i := 1; i <= 60; i++ {
		p := testserver.ProductPath(i)
		if written[p] {
			continue
		}
		s, ok := states[p]
		if asked[p] && (!ok || s == storage.Done) {
			lost = append(lost, p)
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d products asked of the store, not written, and not kept for the next run: %v", len(lost), lost)
	}
	if len(capped) == 0 {
		t.Fatalf("the cap refused nothing (%d requests): the test proves nothing of it", store.Count())
	}
	for p := range capped {
		// Pending, or failed or parked when an earlier link to it was
		// fetched: kept for the next run, whichever.
		if s := states[p]; s != storage.Pending && s != storage.Failed && s != storage.Parked && !written[p] {
			t.Errorf("%s, refused by MaxRequests, is %v in the checkpoint, want it kept for the next run", p, s)
		}
	}
}
