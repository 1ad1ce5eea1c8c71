package breaker_test

import (
	"math"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// TestLateOutcomesOfEarlierRequestsPushNoFailureOut is Colly's synchronous
// nesting: a listing page's outcome is recorded after those of the pages
// it visited, so a chain of 47 healthy listing pages records its 47
// successes after the failures of the page the site began failing on.
// They were answered before those failures; the window keeps the latest
// outcomes in the order the requests left, so they push none out, and the
// site trips after need failing requests, not need plus the failures the
// late successes pushed out (22 against 18 for the aggressive profile).
func TestLateOutcomesOfEarlierRequestsPushNoFailureOut(t *testing.T) {
	p := breaker.Aggressive()
	clk := clocktest.NewFake(epoch)
	b := newBreaker(t, breaker.Config{Profile: p, Clock: clk})
	const host = "shop.test"
	allow := func() (breaker.Ticket, bool) {
		tk, err := b.Allow(host)
		return tk, err == nil
	}
	var parents []breaker.Ticket
	for range 47 {
		tk, ok := allow()
		if !ok {
			t.Fatal("refused on a healthy start")
		}
		parents = append(parents, tk)
	}
	failing := 0
	fail := func() bool {
		tk, ok := allow()
		if !ok {
			return false
		}
		failing++
		b.Record(tk, circuit.Result{Class: circuit.Degraded, Latency: 13 * time.Millisecond})
		return true
	}
	for range 4 { // the 48th page and the user's three retries
		if !fail() {
			t.Fatal("refused after a few failures")
		}
	}
	for i := len(parents) - 1; i >= 0; i-- { // unwinding: the parents' outcomes
		b.Record(parents[i], circuit.Result{Class: circuit.Success, Latency: 13 * time.Millisecond})
	}
	for fail() {
		if failing > 100 {
			t.Fatal("never tripped")
		}
	}
	need := int(math.Ceil(p.FailureThreshold * float64(p.WindowSize)))
	if failing != need {
		t.Fatalf("%d failing requests sent before the trip, want need = %d", failing, need)
	}
}
