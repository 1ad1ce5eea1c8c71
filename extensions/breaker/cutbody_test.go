package breaker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// TestCutBodyAfterANonSuccessStatusCountsAsAFailure sends a store that
// cuts every answer's body mid-way URLs that do not exist: each answer's
// headers say 404, then the connection drops. The 404 says nothing about the
// site's health, but the cut does: an origin dropping its answers is
// struggling, whatever status it began with. The trip bound must hold.
func TestCutBodyAfterANonSuccessStatusCountsAsAFailure(t *testing.T) {
	need := breaker.FailuresToTrip(breaker.Standard())
	for _, w := range dropInWirings() {
		t.Run(w.name, func(t *testing.T) {
			store := startStore(t, testserver.Config{Scenario: testserver.Scenario{Mode: testserver.Truncated}})
			urls := make([]string, 40)
			for i := range urls {
				urls[i] = store.URL() + fmt.Sprintf("/products/sku-%d", 100000+i)
			}
			run := runDropIn(t, w, store, urls, breaker.Config{})
			if !run.ended {
				return
			}
			p := w.parallelism(breaker.Standard())
			if got, bound := store.Count(), need+p-1; got > bound {
				t.Errorf("%s: the store received %d requests whose answers it cut; bound need+P-1 = %d", w.name, got, bound)
			}
			if got := store.CountMode(testserver.Truncated); got == 0 {
				t.Errorf("%s: no answer was cut: the test tested nothing", w.name)
			}
		})
	}
}

// TestCutBodyAfterANotFoundThroughACloneCountsAsAFailure: the same through
// a clone nobody registered, whose requests the transport gates: a 404
// whose body is cut is a failure of the site, not a gone page.
func TestCutBodyAfterANotFoundThroughACloneCountsAsAFailure(t *testing.T) {
	need := breaker.FailuresToTrip(breaker.Standard())
	store := startStore(t, testserver.Config{Scenario: testserver.Scenario{Mode: testserver.Truncated}})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
	c := colly.NewCollector()
	b.Register(c)
	detail := c.Clone()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 40 {
			detail.Visit(store.URL() + fmt.Sprintf("/products/sku-%d", 100000+i))
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the crawl did not end within 20s")
	}
	if got := store.Count(); got > need {
		t.Errorf("the store received %d requests whose 404s it cut; bound need = %d", got, need)
	}
	if got := store.CountMode(testserver.Truncated); got == 0 {
		t.Error("no answer was cut: the test tested nothing")
	}
}
