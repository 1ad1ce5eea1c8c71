package checkpoint_test

import (
	"context"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// throttleRun crawls products 1..n of store over the checkpoint at path,
// stopping (the crawl's context cancelled) at the first throttle when
// stopAtThrottle is set.
func throttleRun(t *testing.T, path string, clk *clock.Fake, store *testserver.Store, n int, stopAtThrottle bool) {
	t.Helper()
	cp := openCP(t, path, checkpoint.WithClock(clk))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := breaker.With(breaker.Config{OnAttempt: func(a breaker.Attempt) {
		if stopAtThrottle && a.Result.Class == breaker.Throttled {
			cancel()
		}
	}})
	b, err := breaker.New(breaker.Standard(), append(cp.BreakerOptions(), breaker.With(breaker.Config{Clock: clk}), stop)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Breaker(b); err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector(colly.StdlibContext(ctx))
	b.Register(c)
	cp.Register(c)
	if _, err := cp.Resume(c); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n && ctx.Err() == nil; i++ {
		_ = c.Visit(store.ProductURL(i))
	}
	if err := closeCP(cp); err != nil {
		t.Fatal(err)
	}
}

// TestResumeHonoursARetryAfterTheStoppedRunWasSent: a store said "come
// back in 30 s" and the crawl stopped; a resume 5 s later must not send it
// anything before the 30 s are over.
func TestResumeHonoursARetryAfterTheStoppedRunWasSent(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	store, err := testserver.Start(testserver.Config{Products: 10, Now: clk.Now,
		Scenario: testserver.Scenario{Mode: testserver.Throttle, After: 3, RetryAfter: 30 * time.Second, RecoverAfter: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	path := dbPath(t)
	throttleRun(t, path, clk, store, 10, true)
	hits := store.Requests()
	last := hits[len(hits)-1]
	if last.Status != 429 {
		t.Fatalf("the first run ended on %d, want a 429", last.Status)
	}
	clk.Advance(5 * time.Second)

	stop := make(chan struct{})
	go clk.Drive(stop)
	throttleRun(t, path, clk, store, 10, false)
	close(stop)
	after := store.Requests()[len(hits):]
	if len(after) == 0 {
		t.Fatal("the resume sent nothing: the test proves nothing")
	}
	if first := after[0]; first.Time.Before(last.Time.Add(30 * time.Second)) {
		t.Fatalf("the resume sent a request %v after the 429 that asked for 30 s", first.Time.Sub(last.Time))
	}
	if got := store.CountMode(testserver.Healthy); got != 10 {
		t.Errorf("%d of 10 products served in the end", got)
	}
}
