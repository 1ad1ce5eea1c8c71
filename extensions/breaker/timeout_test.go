package breaker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

func TestAdaptiveTimeoutCutsAHangingDomain(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 60, Scenario: testserver.Scenario{
		Mode: testserver.Hang, After: 30, Latency: 2 * time.Millisecond, Hold: 20 * time.Second}})
	p := breaker.Standard
	p.Name, p.ConsecutiveFailures = "cut", 3
	p.TimeoutMultiple, p.TimeoutFloor, p.TimeoutAfter = 4, 150*time.Millisecond, 20
	var attempts []breaker.Attempt
	b := newBreaker(t, p, breaker.OnOutcome(func(a breaker.Attempt) { attempts = append(attempts, a) }))
	c := colly.NewCollector()
	c.SetRequestTimeout(10 * time.Second) // the client's own: far too long for a 2 ms site
	b.Register(c)
	for i := 1; i <= 60; i++ {
		c.Visit(store.ProductURL(i))
	}
	st := b.Stats()[0]
	if st.Timeout != 150*time.Millisecond {
		t.Fatalf("adaptive timeout %v, want the 150ms floor (4 × a p95 of a few ms is below it)", st.Timeout)
	}
	if st.State != breaker.Open || st.Count(breaker.Degraded) != 3 || store.Count() != 33 {
		t.Fatalf("stats %+v, %d requests: want three cut requests (degraded) tripping the circuit after 33", st, store.Count())
	}
	var cut int
	for _, a := range attempts {
		var te *breaker.TimeoutError
		if errors.As(a.Err, &te) {
			cut++
			if te.After != 150*time.Millisecond || te.Domain != store.Host() || !errors.Is(a.Err, context.DeadlineExceeded) {
				t.Fatalf("timeout error %+v", te)
			}
			if a.Outcome.Latency >= 5*time.Second {
				t.Fatalf("a cut request took %v: the client's 10 s timeout applied, not the adaptive one", a.Outcome.Latency)
			}
		}
	}
	if cut != 3 {
		t.Fatalf("%d requests cut by the adaptive timeout, want 3", cut)
	}
}

func TestNoAdaptiveTimeoutWithoutEnoughSuccesses(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 10})
	p := breaker.Standard
	p.TimeoutAfter = 20
	b := newBreaker(t, p)
	c := colly.NewCollector()
	b.Register(c)
	for i := 1; i <= 10; i++ {
		c.Visit(store.ProductURL(i))
	}
	if st := b.Stats()[0]; st.Timeout != 0 {
		t.Fatalf("timeout %v after 10 successes, want none before 20", st.Timeout)
	}
}
