package redis_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/circuit/circuittest"
	bwclock "github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/storage/storagetest"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	goredis "github.com/redis/go-redis/v9"
)

// The tests of this file run against a real Redis Cluster of three
// masters the test starts (redistest.NewCluster): a script whose keys were
// in two slots would fail there with CROSSSLOT, so every one that runs
// proves its keys share the crawl's hash tag.

// clusterKeys lists every key under ns on every master, with the master
// that holds it.
func clusterKeys(t *testing.T, c *redistest.Cluster, ns string) map[string]int {
	t.Helper()
	out := map[string]int{}
	ctx := context.Background()
	for i := range c.Masters() {
		keys, err := c.Node(t, i).Keys(ctx, ns+":*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			out[k] = i
		}
	}
	return out
}

func TestCheckpointConformanceOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	c := redistest.NewCluster(t, 3)
	client := c.Client(t)
	n := 0
	storagetest.Run(t, func(t *testing.T) storage.Store {
		n++
		cp, err := redis.OpenCheckpoint(client, "crawl-1", redis.Config{Namespace: "cp" + strconv.Itoa(n)})
		if err != nil {
			t.Fatal(err)
		}
		return cp
	})
}

func TestBreakerStorePassesTheCircuitTableOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	c := redistest.NewCluster(t, 3)
	client := c.Client(t)
	n := 0
	circuittest.Run(t, func(t *testing.T, domain string, s circuit.Settings) circuit.Circuit {
		n++
		bs, err := redis.NewBreakerStore(client, "crawl-1", redis.Config{Namespace: "b" + strconv.Itoa(n), Shards: 1 + n%3})
		if err != nil {
			t.Fatal(err)
		}
		circ, err := bs.Circuit(domain, s)
		if err != nil {
			t.Fatal(err)
		}
		return circ
	})
}

// Three workers crawl 8 domains × 40 products through a Redis Cluster
// while one domain degrades; when about a third of the pages are done the
// crawl's slot (with Config{Shards: 3}, its first shard's) is moved to another
// master key by key (the clients meet ASK and TRYAGAIN while it moves,
// MOVED after). Every page is fetched successfully exactly once and
// marked done, none is lost, the degrading domain trips once for all,
// every worker's run ends without an error, and every key of the crawl is
// in one of its shards' slots, on the master that serves it now.
func TestWorkersCrawlThroughAClusterWhileTheirSlotMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	for _, shards := range []int{1, 3} {
		t.Run("shards="+strconv.Itoa(shards), func(t *testing.T) { testCrawlWhileSlotMoves(t, shards) })
	}
}

func testCrawlWhileSlotMoves(t *testing.T, shards int) {
	const domains, products, workers, parallelism = 8, 40, 3, 4
	c := redistest.NewCluster(t, 3)
	client := c.Client(t)
	ns := "shard-move"
	f := fleet(t, domains, products, testserver.Scenario{Mode: testserver.Degrade, After: 15}, testserver.Scenario{})
	seeds := productSeeds(f, products)
	var ev events
	var logs logBuffer
	var done atomic.Int64
	third := make(chan struct{})
	var once sync.Once
	ev.recoverOnTrip(t, f.Stores[0])
	trip := ev.hook
	ev.hook = func(e workerEvent) {
		trip(e)
		if e.Ev == "done" && done.Add(1) == domains*products/3 {
			once.Do(func() { close(third) })
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	wait := runWorkers(ctx, workers, workerConfig{
		Cluster: c.Addrs(), Shards: shards, Namespace: ns, Crawl: "shop",
		Seeds: seeds, Parallelism: parallelism, Visibility: 20 * time.Second, Cooldown: 1500 * time.Millisecond, Poll: 20 * time.Millisecond,
	}, &ev, func(int) io.Writer { return &logs })
	ended := make(chan struct{})
	go func() { wait(); close(ended) }()

	cs := inspect(t, client, ns, redis.Config{Shards: shards})
	slots := map[int]bool{}
	for _, k := range cs.Keys() {
		slots[redistest.Slot(k)] = true
	}
	if len(slots) != shards {
		t.Fatalf("the crawl's keys are in %d slots, want %d: %v", len(slots), shards, slots)
	}
	owners := map[int]bool{}
	for s := range slots {
		owners[c.Owner(t, s)] = true
	}
	if len(owners) != shards {
		t.Fatalf("the crawl's %d shards are on %d masters, want one each", shards, len(owners))
	}
	slot := redistest.Slot(cs.Keys()[0])
	from := c.Owner(t, slot)
	to := (from + 1) % c.Masters()
	var moved int
	var doneAtStart, doneAtEnd int64
	select {
	case <-third:
		doneAtStart = done.Load()
		// A pause after each key keeps the slot half moved for a while,
		// with the crawl going on.
		moved = c.MigrateSlot(t, slot, to, func(int) { time.Sleep(5 * time.Millisecond) })
		doneAtEnd = done.Load()
	case <-ended:
		t.Fatal("the crawl ended before a third of it was done")
	}
	<-ended
	noErrors(t, wait())
	if ctx.Err() != nil {
		t.Fatal("the crawl did not end within 90s")
	}
	t.Logf("slot %d moved from master %d to %d: %d keys, while outcomes %d..%d were saved; transitions %v",
		slot, from, to, moved, doneAtStart, doneAtEnd, transitions(&ev))
	if doneAtEnd == doneAtStart {
		t.Error("no outcome was saved while the slot moved: the fault did not meet the crawl")
	}
	if t.Failed() || testing.Verbose() {
		logs.mu.Lock()
		t.Logf("the workers' logs:\n%s", logs.b.String())
		logs.mu.Unlock()
	}
	checkEveryProductOnce(t, f, products, client, cs, 0)
	if trips := ev.count("transition", func(e workerEvent) bool { return e.To == "open" }); trips != 1 {
		t.Errorf("%d trips reported across the workers, want exactly 1 shared trip", trips)
	}
	keys := clusterKeys(t, c, ns)
	if len(keys) == 0 {
		t.Fatal("no key of the crawl found on any master")
	}
	for k, i := range keys {
		if s := redistest.Slot(k); !slots[s] || i != c.Owner(t, s) {
			t.Errorf("key %s in slot %d on master %d, want one of the slots %v, on its owner", k, s, i, slots)
		}
	}
}

var _ goredis.UniversalClient = (*goredis.ClusterClient)(nil)

// Three workers crawl over three shards, one per master, and the master
// of a shard other than the first restarts mid-crawl without persistence:
// that shard's jobs, visited entries and copy of the run marker are gone.
// The crawl cannot end complete: every worker's run ends with an error
// wrapping ErrStateLost (naming the lost shard's marker), none as if the
// work were done.
func TestWorkersEndWithStateLostWhenAShardsMasterRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	const domains, products, workers, parallelism, shards = 6, 40, 3, 4, 3
	c := redistest.NewCluster(t, 3)
	client := c.Client(t)
	ns := "shard-lost"
	f := fleet(t, domains, products, testserver.Scenario{}, testserver.Scenario{})
	seeds := productSeeds(f, products)
	var ev events
	var logs logBuffer
	var done atomic.Int64
	third := make(chan struct{})
	var once sync.Once
	ev.hook = func(e workerEvent) {
		if e.Ev == "done" && done.Add(1) == domains*products/3 {
			once.Do(func() { close(third) })
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	wait := runWorkers(ctx, workers, workerConfig{
		Cluster: c.Addrs(), Shards: shards, Namespace: ns, Crawl: "shop",
		Seeds: seeds, Parallelism: parallelism, Visibility: 20 * time.Second, Cooldown: 1500 * time.Millisecond, Poll: 20 * time.Millisecond,
	}, &ev, func(int) io.Writer { return &logs })
	ended := make(chan struct{})
	go func() { wait(); close(ended) }()
	cs := inspect(t, client, ns, redis.Config{Shards: shards})
	lost := cs.Keys()[9+keyRunIndex] // the second shard's run marker
	victim := c.Owner(t, redistest.Slot(lost))
	if victim == c.Owner(t, redistest.Slot(cs.Keys()[0])) {
		t.Fatal("the first two shards are on one master")
	}
	select {
	case <-third:
		c.RestartMaster(t, victim)
	case <-ended:
		t.Fatal("the crawl ended before a third of it was done")
	}
	<-ended
	if ctx.Err() != nil {
		t.Fatal("the workers did not end within 90s")
	}
	errs := wait()
	for w, err := range errs {
		if !errors.Is(err, redis.ErrStateLost) || !strings.Contains(err.Error(), lost) {
			t.Errorf("worker %d ended with %v; want ErrStateLost naming %s", w, err, lost)
		}
	}
	t.Logf("master %d restarted after %d outcomes; the workers ended with: %v", victim, domains*products/3, errs[0])
}

// keyRunIndex is the run marker's place among a shard's nine keys.
const keyRunIndex = 8

// Every script of the package runs on a real cluster, with one shard and
// with three: Redis Cluster refuses a script whose keys are in two slots
// (CROSSSLOT), so each call that succeeds proves its keys share a tag.
// (The checkpoint's scripts run in TestCheckpointConformanceOnACluster.)
func TestEveryScriptRunsOnACluster(t *testing.T) {
	c := redistest.NewCluster(t, 3)
	err := c.Client(t).Eval(ctxT(t), "return 1", []string{"{a}:k", "{b}:k"}).Err()
	if err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("a script over two slots: %v, want CROSSSLOT (else this test proves nothing)", err)
	}
	for _, shards := range []int{1, 3} {
		t.Run("shards="+strconv.Itoa(shards), func(t *testing.T) {
			client := c.Client(t)
			ctx := ctxT(t)
			opts := redis.Config{Namespace: "every" + strconv.Itoa(shards), Shards: shards, MaxAttempts: 1}
			must := func(what string, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			// The queue: enqueue, claim, extend, requeue (Park, Fail),
			// dead, retry dead, ack, reclaim.
			q, err := redis.NewQueue(client, "q", opts)
			must("NewQueue", err)
			var jobs []*redis.Job
			for i := range 6 {
				jobs = append(jobs, &redis.Job{ID: "j" + strconv.Itoa(i), URL: "https://d" + strconv.Itoa(i) + ".example/"})
			}
			_, err = q.Enqueue(ctx, jobs...)
			must("Enqueue", err)
			j, err := q.Claim(ctx)
			must("Claim", err)
			must("Extend", q.Extend(ctx, j))
			must("Park", q.Park(ctx, j, time.Time{}))
			j, err = q.Claim(ctx)
			must("Claim", err)
			must("Fail", q.Fail(ctx, j, errors.New("boom")))
			dead, err := q.Dead(ctx, 10)
			must("Dead", err)
			if len(dead) != 1 {
				t.Fatalf("%d dead letters, want 1", len(dead))
			}
			must("RetryDead", q.RetryDead(ctx, dead[0].ID))
			j, err = q.Claim(ctx)
			must("Claim", err)
			must("Ack", q.Ack(ctx, j))
			_, err = q.Reclaim(ctx)
			must("Reclaim", err)
			_, err = q.Stats(ctx)
			must("Stats", err)

			// Colly's storage: add, claim, ack (with the visited mark),
			// the run marker, visit, done and release of plain visits.
			cs, err := redis.NewCollyStorage(client, "c", opts)
			must("NewCollyStorage", err)
			defer cs.Close()
			must("AddRequest", cs.AddRequest([]byte(`{"URL":"https://a.example/queued"}`)))
			raw, err := cs.GetRequest()
			must("GetRequest", err)
			if !strings.Contains(string(raw), "queued") {
				t.Fatalf("GetRequest gave %s", raw)
			}
			u := func(s string) *colly.Request {
				r, err := http.NewRequest("GET", s, nil)
				must("request", err)
				return &colly.Request{URL: r.URL, Method: "GET"}
			}
			must("Ack (queued)", cs.Ack(u("https://a.example/queued")))
			for i, id := range []uint64{redis.RequestID("https://b.example/done", nil), redis.RequestID("https://b.example/failed", nil)} {
				visited, err := cs.IsVisited(id)
				must("IsVisited", err)
				if visited {
					t.Fatalf("plain visit %d: already visited", i)
				}
				must("Visited", cs.Visited(id))
			}
			must("Ack (plain visit)", cs.Ack(u("https://b.example/done")))
			must("Fail (plain visit)", cs.Fail(u("https://b.example/failed"), errors.New("boom")))
			_, err = cs.QueueSize()
			must("QueueSize", err)
			must("Check", cs.Check(ctx))

			// The circuits: allow, record, snapshot, pause, hold.
			bs, err := redis.NewBreakerStore(client, "b", opts)
			must("NewBreakerStore", err)
			clk := bwclock.System
			for d := range 3 {
				circ, err := bs.Circuit("d"+strconv.Itoa(d)+".example", breaker.Standard().Settings())
				must("Circuit", err)
				p, _, err := circ.Allow(clk)
				must("Allow", err)
				_, err = circ.Record(clk, p, circuit.Result{Class: circuit.Success, Latency: time.Millisecond})
				must("Record", err)
				_, err = circ.Snapshot(clk)
				must("Snapshot", err)
				pauser, ok := circ.(interface {
					Pause(bwclock.Clock, time.Time) error
				})
				if !ok {
					t.Fatal("the shared circuit has no Pause")
				}
				must("Pause", pauser.Pause(clk, time.Now().Add(time.Second)))
				_, err = circ.HoldOpen(clk, time.Now().Add(time.Second), "test")
				must("HoldOpen", err)
				_, err = circ.RestoreOpen(clk, time.Now().Add(2*time.Second), 3)
				must("RestoreOpen", err)
			}
		})
	}
}
