package breaker_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A URL whose throttle retries ran out is given up, not blacklisted: when
// it is asked for again (the user's own retry, or a queue handing its job
// out again later, as storage/redis does), that request is sent or
// refused visibly, never dropped without a word. Found by the chaos suite:
// a Redis worker held such a job for ever, its request dropped as a
// "duplicate re-send" with no outcome, and never ended.
func TestGivenUpThrottledURLIsNotDroppedSilentlyWhenAskedAgain(t *testing.T) {
	store := startStore(t, testserver.Config{Scenario: testserver.Scenario{Mode: testserver.Throttle, RetryAfter: time.Second}})
	var reported atomic.Int64
	b := newBreaker(t, breaker.WithThrottleRetries(breaker.Config{Profile: breaker.Standard(), OnAttempt: func(observe.Attempt) { reported.Add(1) }, OnRefused: func(*colly.Request, *circuit.OpenError) { reported.Add(1) }}, 1))
	c := colly.NewCollector()
	c.AllowURLRevisit = true
	c.SetRequestTimeout(5 * time.Second)
	b.Register(c)
	u := store.ProductURL(1)
	_ = c.Visit(u) // 429, sent again once after its Retry-After, 429 again: given up
	c.Wait()
	sent, before := store.Count(), reported.Load()
	if sent != 2 {
		t.Fatalf("the store received %d requests for the throttled URL, want 2 (the first and one re-send)", sent)
	}
	_ = c.Visit(u) // asked again
	c.Wait()
	if store.Count() == sent && reported.Load() == before {
		t.Errorf("the URL asked for again after its throttle retries were given up was dropped: no request reached the store, no outcome or refusal was reported")
	}
}
