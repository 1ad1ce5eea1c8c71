package redis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/testserver"
	goredis "github.com/redis/go-redis/v9"
)

// events collects the JSON lines workers write; it is an io.Writer.
type events struct {
	mu   sync.Mutex
	part []byte
	all  []workerEvent
	bad  []string
	hook func(workerEvent) // called with each event, under mu; set before the workers start
}

// recoverOnTrip makes s healthy again at the first open transition the
// workers report: the degradation lasts exactly until the breaker acts on
// it, however fast or slow the machine runs the crawl (a recovery after a
// fixed time raced the crawl's pace: on a slow machine the domain healed
// before 10 failures reached it). The probes after the cooldown find it
// healthy.
func (e *events) recoverOnTrip(t *testing.T, s *testserver.Store) {
	var once sync.Once
	e.hook = func(ev workerEvent) {
		if ev.Ev == "transition" && ev.To == "open" {
			once.Do(func() {
				if err := s.SetScenario(testserver.Scenario{Mode: testserver.Healthy}); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

func (e *events) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.part = append(e.part, p...)
	for {
		i := bytes.IndexByte(e.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		var ev workerEvent
		if err := json.Unmarshal(e.part[:i], &ev); err != nil {
			e.bad = append(e.bad, string(e.part[:i]))
		} else {
			e.all = append(e.all, ev)
			if e.hook != nil {
				e.hook(ev)
			}
		}
		e.part = e.part[i+1:]
	}
}

func (e *events) list() []workerEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]workerEvent(nil), e.all...)
}

// count returns how many events of kind ev match f (nil: all).
func (e *events) count(ev string, f func(workerEvent) bool) int {
	n := 0
	for _, x := range e.list() {
		if x.Ev == ev && (f == nil || f(x)) {
			n++
		}
	}
	return n
}

// fleet starts n stores of products each; cfg0 configures the first.
func fleet(t *testing.T, n, products int, first testserver.Scenario, all testserver.Scenario) *testserver.Fleet {
	t.Helper()
	cfgs := make([]testserver.Config, n)
	for i := range cfgs {
		cfgs[i] = testserver.Config{Products: products, Scenario: all}
	}
	cfgs[0].Scenario = first
	f, err := testserver.StartFleet(cfgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// productSeeds lists every product of every store, store by store
// interleaved, so every domain is crawled from the start.
func productSeeds(f *testserver.Fleet, products int) []string {
	var out []string
	for i := 1; i <= products; i++ {
		for _, s := range f.Stores {
			out = append(out, s.ProductURL(i))
		}
	}
	return out
}

// successes returns how many times each path of s was answered healthy.
func successes(s *testserver.Store) map[string]int {
	m := map[string]int{}
	for _, h := range s.Requests() {
		if !h.Failing() {
			m[h.Path]++
		}
	}
	return m
}

// checkEveryProductOnce requires every product of every store to have been
// answered healthy exactly once (maxDup allows that many second fetches in
// all, for crash tests), and every one to be done in Redis.
func checkEveryProductOnce(t *testing.T, f *testserver.Fleet, products int, client goredis.UniversalClient, cs *redis.CollyStorage, maxDup int) {
	t.Helper()
	dups := 0
	for si, s := range f.Stores {
		ok := successes(s)
		for i := 1; i <= products; i++ {
			switch n := ok[testserver.ProductPath(i)]; {
			case n == 0:
				t.Errorf("store %d: %s never fetched successfully: lost", si, testserver.ProductPath(i))
			case n > 1:
				dups += n - 1
				t.Logf("store %d: %s fetched successfully %d times", si, testserver.ProductPath(i), n)
			}
		}
	}
	if dups > maxDup {
		t.Errorf("%d pages fetched successfully more than once, want at most %d", dups, maxDup)
	}
	ctx := context.Background()
	st, err := cs.Queue().Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending() != 0 || st.Dead != 0 {
		t.Errorf("queue after the crawl: %+v, want nothing pending or dead", st)
	}
	var visited []string // one per shard: the seventh of each shard's nine keys
	for i := 6; i < len(cs.Keys()); i += 9 {
		visited = append(visited, cs.Keys()[i])
	}
	notDone := 0
	for _, s := range f.Stores {
		for i := 1; i <= products; i++ {
			id := strconv.FormatUint(redis.RequestID(s.ProductURL(i), nil), 16)
			id = strings.Repeat("0", 16-len(id)) + id
			done := false
			for _, v := range visited {
				if score, err := client.ZScore(ctx, v, id).Result(); err == nil && score == 0 {
					done = true
				}
			}
			if !done {
				notDone++
			}
		}
	}
	if notDone > 0 {
		t.Errorf("%d products are not marked done in the visited set", notDone)
	}
}

// Three workers, each with its own collector and Redis client, crawl 20
// domains × 100 products while one domain degrades: every page is done
// exactly once, the degrading domain trips once for all of them, and the
// requests sent into the degradation stay within window × threshold plus
// what the workers had in flight.
func TestThreeWorkersShareOneCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	t.Parallel() // a long test of its own keys or server: overlap it with the others
	const domains, products, workers, parallelism = 20, 100, 3, 4
	client, ns := newNamespace(t)
	// The degrading domain fails after 30 pages until the trip.
	f := fleet(t, domains, products, testserver.Scenario{Mode: testserver.Degrade, After: 30}, testserver.Scenario{})
	seeds := productSeeds(f, products)
	var ev, logs events
	ev.recoverOnTrip(t, f.Stores[0])
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	began := time.Now()
	wait := runWorkers(ctx, workers, workerConfig{
		Addr: client.Options().Addr, Namespace: ns, Crawl: "shop",
		Seeds: seeds, Parallelism: parallelism, Visibility: 20 * time.Second, Cooldown: 1500 * time.Millisecond, Poll: 20 * time.Millisecond,
	}, &ev, func(int) io.Writer { return &logs })
	errs := wait()
	took := time.Since(began)
	noErrors(t, errs)
	if ctx.Err() != nil {
		t.Fatal("the crawl did not end within 90s")
	}
	cs := inspect(t, client, ns, redis.Config{})
	checkEveryProductOnce(t, f, products, client, cs, 0)

	bad := f.Stores[0]
	trips := ev.count("transition", func(e workerEvent) bool { return e.To == "open" })
	if trips != 1 {
		t.Errorf("%d trips reported across the workers, want exactly 1 shared trip", trips)
	}
	for _, e := range ev.list() {
		if e.Ev == "transition" && e.URL != bad.Host() {
			t.Errorf("a healthy domain's circuit moved: %+v", e)
		}
	}
	failing := bad.CountMode(testserver.Degrade)
	bound := 10 + workers*parallelism // window 20 × threshold 0.5, plus every request in flight
	if failing < 10 || failing > bound {
		t.Errorf("the degrading domain answered %d requests with 503, want between 10 and %d", failing, bound)
	}
	perWorker := map[string]int{}
	for _, e := range ev.list() {
		if e.Ev == "done" {
			perWorker[e.Worker]++
		}
	}
	t.Logf("%d domains × %d products by %d workers in %v: attempts per worker %v; %d sent into the degradation (bound %d), %d refused, transitions: %v",
		domains, products, workers, took.Round(time.Millisecond), perWorker, failing, bound, ev.count("refused", nil), transitions(&ev))
	for w, n := range perWorker {
		if n < domains*products/10 {
			t.Errorf("worker %s did %d attempts: the work was not shared", w, n)
		}
	}
}

// newNamespace is a namespace of the test's own on the test Redis, with a
// client to inspect it.
func newNamespace(t *testing.T) (*goredis.Client, string) {
	t.Helper()
	return redistest.New(t)
}

// inspect opens the crawl's storage for the test to read.
func inspect(t *testing.T, client goredis.UniversalClient, ns string, c redis.Config) *redis.CollyStorage {
	t.Helper()
	if c.Namespace == "" {
		c.Namespace = ns
	}
	cs, err := redis.NewCollyStorage(client, "shop", c)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func transitions(ev *events) []string {
	var out []string
	for _, e := range ev.list() {
		if e.Ev == "transition" {
			out = append(out, e.Worker+":"+e.From+"→"+e.To+"("+e.Reason+")")
		}
	}
	return out
}
