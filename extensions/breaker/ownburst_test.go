package breaker_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// burstRun crawls store with p: warm sequential visits of products 1..warm
// (the baseline is taken there, one request in flight), then the rest of
// its products queued at once on an async collector with no LimitRule, so
// the breaker's room is what caps the requests in flight. The client's
// transport keeps one connection to the store (MaxConnsPerHost), so every
// request in flight beyond the first waits in the client for it: the
// latency the breaker measures climbs with the client's own queue while
// the store answers every page in the same time. With compact, the domain
// is left idle past its IdleTTL between the two and compacted, so the burst
// meets a revived domain.
func burstRun(t *testing.T, store *testserver.Store, p breaker.Profile, warm, products int, compact bool) (collected int64, warned bool, reasons []string, b *breaker.Breaker) {
	t.Helper()
	var tr transitions
	var mu sync.Mutex
	const ttl = 50 * time.Millisecond
	b = newBreaker(t, breaker.Config{
		Profile:       p,
		OnTransition:  tr.hook,
		OnDegrading:   func(string, time.Duration, time.Duration) { mu.Lock(); warned = true; mu.Unlock() },
		BaseTransport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1},
		IdleTTL:       map[bool]time.Duration{false: -1, true: ttl}[compact],
	})
	c := colly.NewCollector(colly.Async(true))
	var got atomic.Int64
	c.OnScraped(func(*colly.Response) { got.Add(1) })
	b.Register(c)
	for i := 1; i <= warm; i++ {
		c.Visit(store.ProductURL(i))
		c.Wait()
	}
	if compact {
		// A sweep compacts what was left alone through a period another
		// sweep ended at least a TTL before.
		for range 10 {
			if b.Compact(); b.Dormant() == 1 {
				break
			}
			time.Sleep(2 * ttl)
		}
		if n := b.Dormant(); n != 1 {
			t.Fatalf("%d domains compacted after the warm-up, want 1", n)
		}
	}
	for i := warm + 1; i <= products; i++ {
		c.Visit(store.ProductURL(i))
	}
	c.Wait()
	mu.Lock()
	defer mu.Unlock()
	return got.Load(), warned, tr.reasons(), b
}

// The slope warning must not fire on the client's own burst (chaos
// seed 2318333116034737678): a healthy store whose baseline was
// taken one request at a time, then sent 180 requests at once, answers
// each as fast as before; what climbs is the time the requests spend
// queued in the client. The aggressive profile's slope trip must not open
// its circuit: every page is collected, the store received each once, and
// the circuit stays closed.
//
// The profile's adaptive timeout is off here: it too is fed latencies the
// client's own queue inflated, and under -race it cut some of the burst
// (3 × the warm-up's p95, at least 500 ms), a separate matter this test
// does not judge.
func TestSlopeIgnoresTheClientsOwnBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	for _, compact := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "compacted between"}[compact], func(t *testing.T) {
			ownBurst(t, compact)
		})
	}
}

func ownBurst(t *testing.T, compact bool) {
	const warm, products = 60, 240
	store := startStore(t, testserver.Config{Products: products, Scenario: testserver.Scenario{Latency: 10 * time.Millisecond}})
	p := breaker.Aggressive()
	p.TimeoutMultiple, p.TimeoutFloor, p.TimeoutAfter = 0, 0, 0
	collected, warned, reasons, b := burstRun(t, store, p, warm, products, compact)
	st := b.Stats()
	t.Logf("collected %d of %d; store received %d; degrading warned %v; transitions %v; stats %+v", collected, products, store.Count(), warned, reasons, st)
	if len(reasons) != 0 || b.State(store.Host()) != circuit.Closed {
		t.Errorf("transitions %v, state %s: the client's own burst opened a healthy store's circuit", reasons, b.State(store.Host()))
	}
	if warned {
		t.Errorf("a degrading warning for a store that answered every page in the same time")
	}
	if collected != products || store.Count() != products {
		t.Errorf("collected %d pages, the store received %d requests; want all %d, each once", collected, store.Count(), products)
	}
}

// A store that really slows down while the client keeps the concurrency
// its baseline was taken at (an async collector held to 4 requests at once
// by a LimitRule from the first request to the last) still trips the
// aggressive profile's slope, before the store's first error.
func TestSlopeStillTripsOnASlowdownAtTheBaselinesConcurrency(t *testing.T) {
	const products = 200
	store := startStore(t, testserver.Config{Products: products, Scenario: testserver.Scenario{
		Mode: testserver.Slope, After: 60, Latency: 2 * time.Millisecond, Step: 5 * time.Millisecond,
		FailAfter: 60, Hold: 300 * time.Millisecond}})
	var tr transitions
	var warned atomic.Bool
	b := newBreaker(t, breaker.Config{Profile: breaker.Aggressive(), OnTransition: tr.hook,
		OnDegrading: func(string, time.Duration, time.Duration) { warned.Store(true) }})
	c := colly.NewCollector(colly.Async(true))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
		t.Fatal(err)
	}
	b.Register(c)
	for i := 1; i <= products; i++ {
		c.Visit(store.ProductURL(i))
	}
	c.Wait()
	reasons := tr.reasons()
	t.Logf("store received %d, %d of them after its first error; warned %v; transitions %v", store.Count(), store.SentAfterFailing(), warned.Load(), reasons)
	if !warned.Load() || len(reasons) == 0 || reasons[0] != circuit.ReasonLatencySlope {
		t.Fatalf("warned %v, transitions %v: want a degrading warning and a latency_slope trip", warned.Load(), reasons)
	}
	if n := store.SentAfterFailing(); n != 0 {
		t.Errorf("%d requests reached the store after its first error: the slope should have tripped before it", n)
	}
}
