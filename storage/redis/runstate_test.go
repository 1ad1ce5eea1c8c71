package redis_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// Redis is SIGKILLed a third of the way into a two-worker crawl and started
// again. Without persistence it comes back empty: what the crawl had
// queued, leased and done is gone, so no worker may end as if its queue
// had drained; each ends with ErrStateLost and logs it. With an
// append-only file synced on every write it comes back whole: the crawl
// completes with every page fetched once.
func TestRedisKilledMidCrawl(t *testing.T) {
	for _, tc := range []struct {
		name     string
		volatile bool
	}{
		{"without persistence every worker ends with the state lost", true},
		{"with appendonly the crawl completes, every page once", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a server of its own: overlap it with the others
			const domains, products, workers, parallelism = 3, 40, 2, 3
			srv := startServer(t, tc.volatile)
			client := srv.client()
			paced := testserver.Scenario{Latency: 5 * time.Millisecond}
			f := fleet(t, domains, products, paced, paced)
			var ev events
			logs := make([]*logBuffer, workers)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			errs := make([]error, workers)
			for w := range workers {
				logs[w] = &logBuffer{}
				wg.Go(func() {
					errs[w] = runWorker(ctx, workerConfig{
						Name: "w" + strconv.Itoa(w), Addr: srv.addr(), Namespace: "killed", Crawl: "shop",
						Seeds: productSeeds(f, products), Parallelism: parallelism, Visibility: 10 * time.Second,
						Cooldown: time.Minute, Poll: 20 * time.Millisecond,
					}, &ev, logs[w])
				})
			}
			for ev.count("done", nil) < domains*products/3 {
				if ctx.Err() != nil {
					t.Fatal("the crawl never got a third of the way")
				}
				time.Sleep(time.Millisecond)
			}
			srv.kill()
			srv.start()
			wg.Wait()
			if ctx.Err() != nil {
				t.Fatal("the workers did not end within 60s")
			}
			if !tc.volatile {
				for w, err := range errs {
					if err != nil {
						t.Errorf("worker %d: %v", w, err)
					}
				}
				checkEveryProductOnce(t, f, products, client, inspect(t, client, "killed"), 0)
				return
			}
			for w, err := range errs {
				if !errors.Is(err, redis.ErrStateLost) {
					t.Errorf("worker %d ended with %v, want ErrStateLost", w, err)
				}
				said := false
				for _, e := range logs[w].events(t) {
					said = said || e["event"] == "redis_state_lost"
				}
				if !said {
					t.Errorf("worker %d logged no redis_state_lost event", w)
				}
			}
			t.Logf("workers ended with: %v", errs)
		})
	}
}
