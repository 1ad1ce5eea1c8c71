package redis_test

import (
	"context"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// Redis is SIGKILLed a third of the way into a two-worker crawl and started
// again. Without persistence it comes back empty: what the crawl had
// queued, leased and done is gone, so no worker may end as if its queue
// had drained; each ends with ErrStateLost and logs it. With an
// append-only file synced on every write it comes back whole: the crawl
// completes with every page fetched once.
func TestRedisKilledMidCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
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
			for w := range logs {
				logs[w] = &logBuffer{}
			}
			wait := runWorkers(ctx, workers, workerConfig{
				Addr: srv.addr(), Namespace: "killed", Crawl: "shop",
				Seeds: productSeeds(f, products), Parallelism: parallelism, Visibility: 10 * time.Second,
				Cooldown: time.Minute, Poll: 20 * time.Millisecond,
			}, &ev, func(w int) io.Writer { return logs[w] })
			for ev.count("done", nil) < domains*products/3 {
				if ctx.Err() != nil {
					t.Fatal("the crawl never got a third of the way")
				}
				time.Sleep(time.Millisecond)
			}
			srv.kill()
			srv.start()
			errs := wait()
			if ctx.Err() != nil {
				t.Fatal("the workers did not end within 60s")
			}
			if !tc.volatile {
				noErrors(t, errs)
				checkEveryProductOnce(t, f, products, client, inspect(t, client, "killed", redis.Config{}), 0)
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

// A worker joins the crawl's run on its first call and checks the run
// marker as it goes: whenever it would report the queue empty, and every
// third of the visibility timeout while work is left. Gone (the crawl's
// keys flushed), or replaced by another run (a worker that joined the
// emptied Redis afresh), the storage ends with ErrStateLost; intact, it
// goes on.
func TestRunMarkerIsCheckedAtTheEndAndAsTheCrawlGoes(t *testing.T) {
	client, ns := redistest.New(t)
	ctx := context.Background()
	req := func(u string) []byte { return []byte(`{"URL":"` + u + `","Method":"GET"}`) }
	opts := redis.Config{VisibilityTimeout: 30 * time.Millisecond}

	t.Run("flushed: found when the queue looks empty", func(t *testing.T) {
		cs := collyStorage(t, ns+"a", opts)
		if err := cs.AddRequest(req("http://shop.test/a")); err != nil {
			t.Fatal(err)
		}
		if n, err := cs.QueueSize(); n != 1 || err != nil {
			t.Fatalf("QueueSize = %d, %v; want 1", n, err)
		}
		if err := cs.Check(ctx); err != nil {
			t.Fatalf("Check with the state intact: %v", err)
		}
		if err := client.Del(ctx, cs.Keys()...).Err(); err != nil {
			t.Fatal(err)
		}
		if n, err := cs.QueueSize(); !errors.Is(err, redis.ErrStateLost) {
			t.Fatalf("QueueSize after the flush = %d, %v; want ErrStateLost, never an empty queue", n, err)
		}
		if _, err := cs.GetRequest(); !errors.Is(err, redis.ErrStateLost) {
			t.Errorf("GetRequest after the loss: %v, want ErrStateLost", err)
		}
		if !errors.Is(cs.Check(ctx), redis.ErrStateLost) || !errors.Is(cs.Lost(), redis.ErrStateLost) {
			t.Errorf("Check %v, Lost %v; want ErrStateLost", cs.Check(ctx), cs.Lost())
		}
	})

	t.Run("flushed: a held job's outcome says the state was lost", func(t *testing.T) {
		cs := collyStorage(t, ns+"c", opts)
		const u = "http://shop.test/held"
		if err := cs.AddRequest(req(u)); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.GetRequest(); err != nil {
			t.Fatal(err)
		}
		if err := client.Del(ctx, cs.Keys()...).Err(); err != nil {
			t.Fatal(err)
		}
		if err := cs.Check(ctx); !errors.Is(err, redis.ErrStateLost) {
			t.Fatalf("Check after the flush: %v, want ErrStateLost", err)
		}
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		r := &colly.Request{URL: pu, Method: "GET"}
		if err := cs.Park(r, time.Time{}); !errors.Is(err, redis.ErrStateLost) {
			t.Errorf("Park of a job lost with the crawl: %v, want ErrStateLost", err)
		}
	})

	t.Run("replaced: found while work is left", func(t *testing.T) {
		cs := collyStorage(t, ns+"b", opts)
		if err := cs.AddRequest(req("http://shop.test/a")); err != nil {
			t.Fatal(err)
		}
		if err := client.Del(ctx, cs.Keys()...).Err(); err != nil {
			t.Fatal(err)
		}
		fresh := collyStorage(t, ns+"b", opts) // joins the emptied crawl: a new run
		if err := fresh.AddRequest(req("http://shop.test/b")); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			n, err := cs.QueueSize()
			if errors.Is(err, redis.ErrStateLost) {
				break
			}
			if err != nil || n != 1 || time.Now().After(deadline) {
				t.Fatalf("QueueSize = %d, %v; want 1 until the periodic check finds another run, then ErrStateLost", n, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		// The worker that found the loss marked the crawl lost: the fresh
		// worker, crawling a run that lacks everything the first one did,
		// is told so too.
		if err := fresh.Check(ctx); !errors.Is(err, redis.ErrStateLost) {
			t.Errorf("the fresh worker's run after the first worker found the loss: %v, want ErrStateLost", err)
		}
	})

	t.Run("flushed: nothing is written into the emptied Redis before the check", func(t *testing.T) {
		cs := collyStorage(t, ns+"e", opts)
		if err := cs.AddRequest(req("http://shop.test/a")); err != nil {
			t.Fatal(err)
		}
		if err := client.Del(ctx, cs.Keys()...).Err(); err != nil {
			t.Fatal(err)
		}
		// No call failed (a connection the client replaced quietly), and
		// no periodic check is due: the writes themselves must refuse.
		if err := cs.AddRequest(req("http://shop.test/b")); !errors.Is(err, redis.ErrStateLost) {
			t.Fatalf("AddRequest into the emptied crawl: %v, want ErrStateLost", err)
		}
		if v, err := cs.IsVisited(redis.RequestID("http://shop.test/c", nil)); !errors.Is(err, redis.ErrStateLost) {
			t.Fatalf("IsVisited in the emptied crawl = %v, %v; want ErrStateLost", v, err)
		}
		left, err := client.Exists(ctx, cs.Keys()...).Result()
		if err != nil {
			t.Fatal(err)
		}
		// The tombstone in the run marker is the one key there may be.
		if marker, _ := client.Get(ctx, cs.Keys()[len(cs.Keys())-1]).Result(); left > 1 || (left == 1 && !strings.HasPrefix(marker, "~")) {
			t.Errorf("%d of the crawl's keys were written after the loss (run marker %q)", left, marker)
		}
	})

	t.Run("new: a storage whose first call is IsVisited joins a new crawl", func(t *testing.T) {
		cs := collyStorage(t, ns+"f", opts)
		if v, err := cs.IsVisited(redis.RequestID("http://shop.test/a", nil)); v || err != nil {
			t.Fatalf("IsVisited on a new crawl = %v, %v; want a new URL", v, err)
		}
		if err := cs.Check(ctx); err != nil {
			t.Fatalf("Check after joining by IsVisited: %v", err)
		}
	})

	t.Run("lost: a worker that joins afterwards is refused until the crawl is purged", func(t *testing.T) {
		cs := collyStorage(t, ns+"d", opts)
		if err := cs.AddRequest(req("http://shop.test/a")); err != nil {
			t.Fatal(err)
		}
		if err := client.Del(ctx, cs.Keys()...).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.QueueSize(); !errors.Is(err, redis.ErrStateLost) {
			t.Fatalf("QueueSize after the flush: %v, want ErrStateLost", err)
		}
		// A worker started after the loss would otherwise take the
		// emptied Redis for a new crawl and fetch again, from the start
		// URLs, everything the lost run had done.
		late := collyStorage(t, ns+"d", opts)
		err := late.AddRequest(req("http://shop.test/a"))
		if !errors.Is(err, redis.ErrStateLost) || !strings.Contains(err.Error(), "purge") {
			t.Fatalf("a worker joining the lost crawl: %v; want ErrStateLost, saying to purge the crawl", err)
		}
		if err := late.Check(ctx); !errors.Is(err, redis.ErrStateLost) {
			t.Errorf("Check of the refused worker: %v, want ErrStateLost (its ending must say the state was lost)", err)
		}
		if n, err := client.Exists(ctx, late.Keys()[:6]...).Result(); err != nil || n != 0 {
			t.Errorf("the refused worker wrote %d of the queue's keys (%v)", n, err)
		}
		if _, err := redis.DeleteCrawl(ctx, client, ns+"d", "crawl-1", 1); err != nil {
			t.Fatal(err)
		}
		again := collyStorage(t, ns+"d", opts)
		if err := again.AddRequest(req("http://shop.test/a")); err != nil {
			t.Fatalf("a worker joining the purged crawl: %v, want a new run", err)
		}
	})
}
