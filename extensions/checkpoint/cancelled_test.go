package checkpoint_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A crawl stopped by its own context while a request into a failing site
// is in flight: the site received it, nobody knows what it answered. The
// resumed crawl must count it as the failure it may have been, as it does
// a request in flight when a process was killed, or a stop and a resume
// send one request more into the failure than an uninterrupted run would.
func TestCancelledInFlightRequestCountsAsSuspectOnResume(t *testing.T) {
	const p = 2
	need := breaker.Standard().Settings().FailuresToTrip()
	store := startStore(t, testserver.Config{Products: 60, PerPage: 60,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 25, Latency: 40 * time.Millisecond}})
	path := dbPath(t)
	clk := clocktest.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))

	run := func(stopAfter int64) outcome.Outcome {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cp := openCP(t, path, checkpoint.Config{Clock: clk})
		var failures atomic.Int64
		b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk, Pacing: breaker.Pacing{Parallelism: p}, OnAttempt: func(a observe.Attempt) {
			if a.Result.Class.Failure() {
				failures.Add(1)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Observe(b); err != nil {
			t.Fatal(err)
		}
		c := colly.NewCollector(colly.Async(true), colly.StdlibContext(ctx))
		c.SetRequestTimeout(5 * time.Second)
		if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: p}); err != nil {
			t.Fatal(err)
		}
		b.Register(c)
		cp.Register(c)
		var mu sync.Mutex
		c.OnHTML(testserver.ProductLinkSelector+", "+testserver.NextSelector, func(e *colly.HTMLElement) {
			mu.Lock()
			defer mu.Unlock()
			_ = e.Request.Visit(e.Attr("href"))
		})
		if _, err := cp.Resume(c); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		if stopAfter > 0 {
			// Stop once stopAfter failures are recorded and one more
			// failing request has reached the store, its answer not back.
			go func() {
				for {
					select {
					case <-done:
						return
					case <-time.After(time.Millisecond):
					}
					if f := failures.Load(); f >= stopAfter && int64(failingHits(store)) > f {
						cancel()
						return
					}
				}
			}()
		}
		_ = c.Visit(store.URL() + "/")
		c.Wait()
		close(done)
		o := outcome.Decide(-1, b, cp)
		cp.SetOutcome(o)
		if err := closeCP(cp); err != nil {
			t.Fatal(err)
		}
		return o
	}

	run(4)
	first := failingHits(store)
	if first < 5 || first >= need {
		t.Fatalf("first run: %d failing requests; want the stop after 4 and one in flight, below %d", first, need)
	}
	run(0)
	sent := failingHits(store)
	t.Logf("failing requests: %d before the stop (one in flight when it came), %d in all; bound need+P-1 = %d", first, sent, need+p-1)
	if sent > need+p-1 {
		t.Errorf("%d failing requests in all (%d before the stop); an uninterrupted run sends at most need + P − 1 = %d", sent, first, need+p-1)
	}
}
