package redis_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// A store that answers 429 with a Retry-After far longer than the lease:
// the first worker's requests wait at its breaker's gate, holding their
// jobs, for longer than the visibility timeout, while a second worker,
// started once the store has recovered, is never throttled and keeps
// claiming. Both workers are alive, so nothing may be taken back from the
// first: every page is fetched healthy once and its outcome saved once,
// with no lease expiring and no outcome refused as unknown or lost.
func TestThrottlePauseLongerThanTheLeaseFetchesEachPageOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	t.Parallel() // a long test of its own keys: overlap it with the others
	const products, workers, parallelism = 40, 2, 3
	const lease = 600 * time.Millisecond
	client, ns := newNamespace(t)
	// 6 pages, then 429 "Retry-After: 2" for 100 ms: the first worker's
	// breaker halts the domain for 2 s, more than three leases.
	throttled := testserver.Scenario{Mode: testserver.Throttle, After: 6, RetryAfter: 2 * time.Second,
		RecoverAfter: 100 * time.Millisecond, Latency: 20 * time.Millisecond}
	f := fleet(t, 1, products, throttled, throttled)
	var ev events
	logs := make([]*logBuffer, workers)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		logs[w] = &logBuffer{}
		if w > 0 { // once the first is paused and the store healthy again
			for f.Stores[0].CountMode(testserver.Throttle) == 0 {
				if ctx.Err() != nil {
					t.Fatal("the store never answered 429")
				}
				time.Sleep(time.Millisecond)
			}
			time.Sleep(150 * time.Millisecond)
		}
		wg.Go(func() {
			errs[w] = runWorker(ctx, workerConfig{
				Name: "w" + strconv.Itoa(w), Addr: client.Options().Addr, Namespace: ns, Crawl: "shop",
				Seeds: productSeeds(f, products), Parallelism: parallelism, Visibility: lease,
				Cooldown: time.Minute, Poll: 20 * time.Millisecond,
			}, &ev, logs[w])
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", w, err)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the crawl did not end within 60s")
	}
	throttles := f.Stores[0].CountMode(testserver.Throttle)
	if throttles == 0 {
		t.Fatal("the store never answered 429: the test proves nothing")
	}
	checkEveryProductOnce(t, f, products, client, inspect(t, client, ns, redis.Config{}), 0)
	saved := map[string]int{}
	for _, e := range ev.list() {
		if e.Ev == "done" && e.Class == "success" {
			saved[e.URL]++
		}
	}
	for u, n := range saved {
		if n > 1 {
			t.Errorf("%s: its success was reported %d times, want once", u, n)
		}
	}
	for w, l := range logs {
		for _, e := range l.events(t) {
			msg, _ := e["message"].(string)
			if e["event"] == "outcome_not_saved" || strings.HasPrefix(msg, "leases expired") {
				t.Errorf("worker %d logged %v", w, e)
			}
		}
	}
	t.Logf("%d answers of 429 with Retry-After 2 s against a %v lease; %d pages saved", throttles, lease, len(saved))
}

// The keeper extends only the leases of jobs under way. A job whose
// request Colly drops before it starts (here a URL filter) and one whose
// outcome nobody reports (no breaker, no Ack) past the max hold come back
// after their lease as before, until their attempts are spent: a live
// worker does not sit on them, and the crawl ends.
func TestLeasesOfJobsNotUnderWayRunOut(t *testing.T) {
	t.Parallel()
	store, err := testserver.Start(testserver.Config{Products: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, tc := range []struct {
		name    string
		dropped bool
	}{{"dropped by a URL filter", true}, {"fetched, outcome never reported", false}} {
		t.Run(tc.name, func(t *testing.T) {
			_, ns := redistest.New(t)
			cs := collyStorage(t, ns, redis.Config{VisibilityTimeout: 150 * time.Millisecond, MaxHold: 300 * time.Millisecond, MaxAttempts: 2, PollInterval: 20 * time.Millisecond})
			c := colly.NewCollector()
			if tc.dropped {
				c.DisallowedURLFilters = []*regexp.Regexp{regexp.MustCompile(`/products/`)}
			}
			cs.Register(c)
			q, err := queue.New(2, cs)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.AddURL(store.ProductURL(1)); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- q.Run(c) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(15 * time.Second):
				cs.Close()
				t.Fatal("the crawl did not end: a job nobody works on kept its lease")
			}
			if st, _ := cs.Queue().Stats(context.Background()); st.Pending() != 0 || st.Dead != 1 {
				t.Fatalf("after the crawl: %+v, want the job dead-lettered after its 2 attempts", st)
			}
		})
	}
}
