package redis_test

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// The wiring a product crawl uses with Redis: extensions/checkpoint keeps
// every URL's state in the Redis Checkpoint, the breakers share a
// BreakerStore, and the CollyStorage, registered last, is Colly's storage
// and frontier (the checkpoint's own visited set decides per process, so
// it must not be Colly's storage when several workers share a crawl). Two
// workers, one domain degrading until the trip, then healthy: every page
// done once, and the checkpoint ends with every URL done.
func TestCheckpointExtensionOverRedisWithSharedWorkers(t *testing.T) {
	const domains, products = 3, 30
	client, ns := newNamespace(t)
	f := fleet(t, domains, products, testserver.Scenario{Mode: testserver.Degrade, After: 25}, testserver.Scenario{})
	var wg sync.WaitGroup
	var trips [2]atomic.Int32
	var recovered sync.Once
	for w := range 2 {
		wg.Go(func() {
			opts := []redis.Config{redis.Config{Namespace: ns, PollInterval: 20 * time.Millisecond, BackoffBase: 20 * time.Millisecond, BackoffCap: 100 * time.Millisecond}}
			store, err := redis.OpenCheckpoint(client, "shop", opts...)
			if err != nil {
				t.Error(err)
				return
			}
			cp, err := checkpoint.New(store, checkpoint.Config{MaxAttempts: 5})
			if err != nil {
				t.Error(err)
				return
			}
			cs, err := redis.NewCollyStorage(client, "shop", opts...)
			if err != nil {
				t.Error(err)
				return
			}
			bs, err := redis.NewBreakerStore(client, "shop", opts...)
			if err != nil {
				t.Error(err)
				return
			}
			b, err := breaker.New(breaker.Config{Profile: e2eProfile(time.Second), Store: bs, OnTransition: func(tr circuit.Transition) {
				if tr.To == circuit.Open {
					trips[w].Add(1)
					// Healthy from the trip on, whatever the machine's pace.
					recovered.Do(func() {
						if err := f.Stores[0].SetScenario(testserver.Scenario{Mode: testserver.Healthy}); err != nil {
							t.Error(err)
						}
					})
				}
			}})
			if err != nil {
				t.Error(err)
				return
			}
			c := colly.NewCollector() // synchronous: the queue's threads are the parallelism
			b.Register(c)
			cp.Register(c)
			cs.Register(c) // last: Colly's storage is the shared one
			if err := cp.Observe(b); err != nil {
				t.Error(err)
			}
			if err := cs.Observe(b); err != nil {
				t.Error(err)
			}
			q, err := queue.New(3, cs)
			if err != nil {
				t.Error(err)
				return
			}
			for _, s := range productSeeds(f, products) {
				if err := q.AddURL(s); err != nil {
					t.Error(err)
				}
			}
			if err := q.Run(c); err != nil {
				t.Errorf("worker %d: %v", w, err)
			}
			if err := cp.Close(); err != nil {
				t.Errorf("worker %d: checkpoint: %v", w, err)
			}
		})
	}
	wg.Wait()
	checkEveryProductOnce(t, f, products, client, inspect(t, client, ns), 0)
	store, err := redis.OpenCheckpoint(client, "shop", redis.Config{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	counts, err := store.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if counts[storage.Done] != domains*products || len(counts) != 1 {
		t.Errorf("checkpoint states %v, want all %d URLs done", counts, domains*products)
	}
	if n := trips[0].Load() + trips[1].Load(); n != 1 {
		t.Errorf("trips seen by the workers: %d, want one in all", n)
	}
	t.Logf("checkpoint states %v; trips per worker %s", counts, strconv.Itoa(int(trips[0].Load()))+","+strconv.Itoa(int(trips[1].Load())))
}
