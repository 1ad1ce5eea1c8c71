package breaker_test

import (
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// An observer of a 429 learns when the pause it started ends, so a
// timeline can draw the pause; other answers carry no pause.
func TestAttemptOfA429SaysWhenItsPauseEnds(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 3, Scenario: testserver.Scenario{Mode: testserver.Throttle, After: 1, RetryAfter: 30 * time.Second}})
	var mu sync.Mutex
	var seen []observe.Attempt
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), ResendHorizon: time.Second, OnAttempt: func(a observe.Attempt) {
		mu.Lock()
		seen = append(seen, a)
		mu.Unlock()
	}})
	c := colly.NewCollector()
	b.Register(c)
	start := time.Now()
	c.Visit(store.ProductURL(1))
	c.Visit(store.ProductURL(2))
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("%d attempts observed, want 2", len(seen))
	}
	if ok := seen[0]; ok.Result.Class != circuit.Success || !ok.PausedUntil.IsZero() {
		t.Errorf("first attempt: %v, paused until %v; want a success and no pause", ok.Result.Class, ok.PausedUntil)
	}
	th := seen[1]
	if th.Result.Class != circuit.Throttled {
		t.Fatalf("second attempt: %v, want throttled", th.Result.Class)
	}
	if lo, hi := start.Add(29*time.Second), time.Now().Add(31*time.Second); th.PausedUntil.Before(lo) || th.PausedUntil.After(hi) {
		t.Errorf("the 429's PausedUntil is %v, want about 30 s after it (%v … %v)", th.PausedUntil, lo, hi)
	}
}
