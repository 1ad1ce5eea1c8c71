package breaker_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/internal/pace"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

func TestWaitingDomainNeverHoldsUpAnother(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	fleet, err := testserver.StartFleet(
		testserver.Config{Products: 20, Now: clk.Now, Scenario: testserver.Scenario{Mode: testserver.Throttle, RetryAfter: 30 * time.Second}},
		testserver.Config{Products: 50},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	slow, fast := fleet.Stores[0], fleet.Stores[1]
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Clock: clk, Pacing: breaker.Pacing{Parallelism: 2}})
	c := colly.NewCollector(colly.Async(true))
	b.Register(c)
	var fastDone atomic.Int32
	c.OnScraped(func(r *colly.Response) {
		if r.Request.URL.Host == fast.Host() {
			fastDone.Add(1)
		}
	})
	for i := 1; i <= 50; i++ {
		if i <= 20 {
			c.Visit(slow.ProductURL(i))
		}
		c.Visit(fast.ProductURL(i))
	}
	// Time stands still: the throttled domain waits out its 30 s while the
	// other one finishes every page.
	deadline := time.Now().Add(10 * time.Second)
	for fastDone.Load() < 50 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := fastDone.Load(); n != 50 {
		t.Fatalf("healthy domain finished %d of 50 pages while the other waited", n)
	}
	sentSlow := slow.Count()
	if sentSlow > 2 {
		t.Fatalf("throttled domain received %d requests before its Retry-After passed, want at most its 2 in flight", sentSlow)
	}
	// Let the store recover and time pass: the waiting requests go out.
	slow.SetScenario(testserver.Scenario{})
	stop := make(chan struct{})
	go clk.Drive(stop)
	c.Wait()
	close(stop)
	for i := 1; i <= 20; i++ {
		if slow.CountPath(testserver.ProductPath(i)) == 0 {
			t.Fatalf("throttled product %d was never fetched", i)
		}
	}
	st := b.Stats()
	if st[0].Domain != slow.Host() && st[1].Domain == slow.Host() {
		st[0] = st[1]
	}
	if st[0].Pace.Pauses == 0 || st[0].Pace.PausedFor < 30*time.Second {
		t.Fatalf("pace %+v: want the 30 s pause counted", st[0].Pace)
	}
}

// The rate-limit scenario scaled down for a unit test: a token bucket at
// 50 requests/s with a burst of 5 answering 429 + Retry-After when empty.
// Every page must be saved and 429s stay a small share of what was sent.
// The full-size run (10/s, 300 pages) is in the bench command.
func TestRateLimitedSiteIsPacedNotTripped(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	store := startStore(t, testserver.Config{Products: 100,
		Scenario: testserver.Scenario{Mode: testserver.RateLimit, Rate: 50, Burst: 5}})
	b := newBreaker(t, breaker.WithThrottleRetries(breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{Parallelism: 2}}, 50))
	c := colly.NewCollector(colly.Async(true))
	b.Register(c)
	var ok atomic.Int32
	c.OnScraped(func(*colly.Response) { ok.Add(1) })
	start := time.Now()
	for i := 1; i <= 100; i++ {
		c.Visit(store.ProductURL(i))
	}
	c.Wait()
	sent, throttled := store.Count(), store.CountMode(testserver.RateLimit)
	t.Logf("100 pages at 50/s burst 5: %d requests, %d answered 429 (%.1f%%), wall %v (ideal 2s), pace %+v",
		sent, throttled, 100*float64(throttled)/float64(sent), time.Since(start).Round(time.Millisecond), b.Stats()[0].Pace)
	if ok.Load() != 100 {
		t.Fatalf("%d of 100 pages saved", ok.Load())
	}
	if throttled == 0 {
		t.Fatal("the store never throttled: the test proves nothing")
	}
	if float64(throttled) > 0.10*float64(sent) {
		t.Fatalf("%d of %d requests answered 429, want at most 10%%", throttled, sent)
	}
	if s := b.State(store.Host()); s != circuit.Closed {
		t.Fatalf("state %s: throttling must never trip", s)
	}
}

func TestServiceUnavailableWithRetryAfterIsThrottling(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	store := startStore(t, testserver.Config{Products: 30, Now: clk.Now,
		Scenario: testserver.Scenario{Mode: testserver.Throttle, Status: 503, After: 3, RetryAfter: 5 * time.Second, RecoverAfter: 20 * time.Second}})
	b := newBreaker(t, breaker.WithThrottleRetries(breaker.Config{Profile: breaker.Conservative(), Clock: clk}, 50))
	c := colly.NewCollector()
	b.Register(c)
	stop := make(chan struct{})
	go clk.Drive(stop)
	for i := 1; i <= 30; i++ {
		c.Visit(store.ProductURL(i))
	}
	close(stop)
	st := b.Stats()[0]
	if st.State != circuit.Closed || st.Outcomes[circuit.Degraded.String()] != 0 || st.Outcomes[circuit.Throttled.String()] == 0 || st.Outcomes[circuit.Success.String()] != 30 {
		t.Fatalf("stats %+v: a 503 with Retry-After must pace the domain (throttled), not trip it", st)
	}
}

func TestServiceUnavailableWithoutRetryAfterTrips(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 100,
		Scenario: testserver.Scenario{Mode: testserver.RateLimit, Rate: 10, Burst: 5, Status: 503}})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{Parallelism: 2}})
	c := colly.NewCollector(colly.Async(true))
	b.Register(c)
	for i := 1; i <= 100; i++ {
		c.Visit(store.ProductURL(i))
	}
	c.Wait()
	st := b.Stats()[0]
	t.Logf("503 rate limiter without Retry-After: %d requests sent, %d answered 503, state %s", store.Count(), store.CountMode(testserver.RateLimit), st.State)
	if st.State != circuit.Open || st.Outcomes[circuit.Degraded.String()] < 10 {
		t.Fatalf("stats %+v: 503s without Retry-After are degradation; the standard breaker trips", st)
	}
	if store.Count() > 20+1 {
		t.Fatalf("%d requests sent; the breaker bound is a window (20) plus parallelism - 1", store.Count())
	}
}

func TestPacingOutOfRangeIsRejectedByNew(t *testing.T) {
	for _, p := range []breaker.Pacing{{Parallelism: -1}, {MinGap: -time.Second}, {Backoff: 0.5}, {Recover: -1}, {Step: -time.Second}} {
		if _, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Pacing: p}); err == nil {
			t.Errorf("Pacing %+v accepted", p)
		} else if !strings.Contains(err.Error(), "breaker: ") || !strings.Contains(err.Error(), "Pacing") {
			t.Errorf("Pacing %+v: error %q does not name the breaker's Pacing", p, err)
		}
	}
}

func TestPacingDefaultsAreThePacesOwn(t *testing.T) {
	if breaker.DefaultMaxGap != pace.DefaultMaxGap || breaker.DefaultThrottleHorizon != pace.DefaultThrottleHorizon {
		t.Fatalf("breaker's defaults %v, %v; the pace's %v, %v", breaker.DefaultMaxGap, breaker.DefaultThrottleHorizon, pace.DefaultMaxGap, pace.DefaultThrottleHorizon)
	}
}
