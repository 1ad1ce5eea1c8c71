package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// A worker with a wait horizon ends when all that is left must wait
// beyond it. A throttled URL the breaker would send again itself only
// after a longer wait (here a Retry-After of 1 s against a horizon of
// 300 ms; in a long crawl, the pace gap a sustained throttle has doubled
// up to a minute) must not be held in flight meanwhile: the worker would
// sit on its job, not ending, for as long as the store keeps throttling.
// The job goes back to the queue, parked until the domain may be asked
// again, with no attempt spent, and the worker ends.
func TestThrottledURLDueBeyondTheWaitHorizonIsParkedNotHeld(t *testing.T) {
	_, ns := newNamespace(t)
	store, err := testserver.Start(testserver.Config{Products: 5,
		Scenario: testserver.Scenario{Mode: testserver.Throttle, RetryAfter: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cs := collyStorage(t, ns, redis.Config{WaitHorizon: 300 * time.Millisecond, PollInterval: 20 * time.Millisecond, BackoffBase: 20 * time.Millisecond, BackoffCap: 100 * time.Millisecond})
	b, err := breaker.New(breaker.Config{Profile: e2eProfile(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Observe(b); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := colly.NewCollector(colly.StdlibContext(ctx))
	cs.Register(c)
	b.Register(c)
	q, err := queue.New(1, cs)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.AddURL(store.URL()); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- q.Run(c) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		cancel()
		cs.Close()
		<-done
		t.Fatalf("the worker did not end within 10 s: the store received %d requests", store.Count())
	}
	if n := store.Count(); n != 1 {
		t.Errorf("the store received %d requests, want 1: the throttled URL is due again after the horizon", n)
	}
	st, err := cs.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Delayed != 1 || st.Dead != 0 || st.InFlight != 0 || st.Ready != 0 {
		t.Fatalf("queue after the run: %+v, want the start URL's job delayed, not dead nor held", st)
	}
	if due := parkedUntil(t, cs); due.Before(began.Add(time.Second)) {
		t.Errorf("the job is due at %v, before the Retry-After (1 s after %v) ends", due, began)
	}
}

// parkedUntil is when the crawl's only delayed job becomes claimable.
func parkedUntil(t *testing.T, cs *redis.CollyStorage) time.Time {
	t.Helper()
	zs, err := redistest.Client(t).ZRangeWithScores(context.Background(), cs.Queue().Keys()[1], 0, -1).Result()
	if err != nil || len(zs) != 1 {
		t.Fatalf("delayed set: %v, %v; want one job", zs, err)
	}
	return time.UnixMilli(int64(zs[0].Score))
}
