package checkpoint_test

import (
	"context"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// throttleRun crawls products 1..n of store over the checkpoint at path,
// stopping (the crawl's context cancelled) at the first throttle when
// stopAtThrottle is set.
func throttleRun(t *testing.T, path string, clk *clocktest.Fake, store *testserver.Store, n int, stopAtThrottle bool) {
	t.Helper()
	cp := openCP(t, path, checkpoint.Config{Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk, OnAttempt: func(a observe.Attempt) {
		if stopAtThrottle && a.Result.Class == circuit.Throttled {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Observe(b); err != nil {
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
	clk := clocktest.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
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

// A throttled URL the breaker hands back (its re-send due beyond the
// resend horizon a shared queue sets) is parked until it is due, with its
// attempt given back: not failed, and not sent again by this run.
func TestThrottledURLHandedBackIsParkedUntilItsResend(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	store := startStore(t, testserver.Config{Products: 3, Now: clk.Now,
		Scenario: testserver.Scenario{Mode: testserver.Throttle, RetryAfter: 30 * time.Second}})
	cp := openCP(t, dbPath(t), checkpoint.Config{Clock: clk})
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk, ResendHorizon: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Observe(b); err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector()
	b.Register(c)
	cp.Register(c)
	_ = c.Visit(store.ProductURL(1))
	if n := store.Count(); n != 1 {
		t.Fatalf("the store received %d requests, want 1: the re-send is due in 30 s, beyond the 1 s horizon", n)
	}
	var recs []storage.Record
	if err := cp.Store().Scan(func(r storage.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("checkpoint holds %d records, want 1", len(recs))
	}
	r := recs[0]
	if r.State != storage.Parked || r.Attempts != 0 || r.NotBefore.Before(clk.Now().Add(30*time.Second)) {
		t.Fatalf("record %+v: want parked until the Retry-After's end (%v), no attempt spent", r, clk.Now().Add(30*time.Second))
	}
	u := b.Unfinished().URLs
	if len(u) != 1 || !u[0].RetryAt.Equal(r.NotBefore) {
		t.Fatalf("breaker's unfinished list %+v, want the URL with RetryAt %v", u, r.NotBefore)
	}
}
