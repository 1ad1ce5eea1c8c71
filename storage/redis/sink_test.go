package redis_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// Two workers share a crawl (its queue, visited set and checkpoint in
// Redis), each writing products through its own checkpoint's Sink to its
// own file. The first to reach one product writes it and then stalls past
// its lease (MaxHold): the job is taken over by the other worker, which
// fetches and writes it too, and commits first; the stalled worker then
// gets its page done. The union of the files holds every product once;
// the stalled worker's record of it was left out. A resumed worker whose
// file a kill tore mid-line gets its file back whole.
func TestSinkOverRedisWritesEachProductOnceAcrossWorkersAndATakeover(t *testing.T) {
	const products = 12
	client, ns := newNamespace(t)
	store := startStoreT(t, testserver.Config{Products: products})
	victim := store.ProductURL(3)
	dir := t.TempDir()
	files := [2]string{filepath.Join(dir, "w0.jsonl"), filepath.Join(dir, "w1.jsonl")}
	opts := redis.Config{Namespace: ns, VisibilityTimeout: 150 * time.Millisecond, MaxHold: 50 * time.Millisecond,
		PollInterval: 10 * time.Millisecond, BackoffBase: 10 * time.Millisecond, BackoffCap: 50 * time.Millisecond}

	var stalled atomic.Int32 // 1 + the worker that stalled on the victim
	var sinks [2]*checkpoint.Sink
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			st, err := redis.OpenCheckpoint(client, "shop", opts)
			if err != nil {
				t.Error(err)
				return
			}
			cp, err := checkpoint.New(st, checkpoint.Config{})
			if err != nil {
				t.Error(err)
				return
			}
			f, err := os.OpenFile(files[w], os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			sink, err := cp.Sink(f, checkpoint.SinkConfig{Worker: "w" + string(rune('0'+w))})
			if err != nil {
				t.Error(err)
				return
			}
			sinks[w] = sink
			cs, err := redis.NewCollyStorage(client, "shop", opts)
			if err != nil {
				t.Error(err)
				return
			}
			b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
			if err != nil {
				t.Error(err)
				return
			}
			c := colly.NewCollector()
			b.Register(c)
			cp.Register(c)
			cs.Register(c) // last: Colly's storage is the shared one
			if err := cp.Observe(b); err != nil {
				t.Error(err)
			}
			if err := cs.Observe(b); err != nil {
				t.Error(err)
			}
			c.OnHTML("div.product", func(e *colly.HTMLElement) {
				u := e.Request.URL.String()
				if err := sink.Write(e.Request, map[string]string{"url": u, "title": e.ChildText("h1.title")}); err != nil {
					t.Errorf("worker %d: %v", w, err)
				}
				if u != victim || !stalled.CompareAndSwap(0, int32(w)+1) {
					return
				}
				// Stalled mid-page, its record written, past its lease: the
				// other worker takes the job over and commits the page first.
				other := files[1-w]
				for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
					if b, _ := os.ReadFile(other); bytes.Contains(b, []byte(`"url":"`+victim+`"`)) {
						return
					}
				}
				st, _ := inspect(t, client, ns).Stats(t.Context())
				t.Errorf("worker %d: the other worker did not write the product it took over within 10 s; queue %+v", w, st)
			})
			q, err := queue.New(1, cs) // one thread: only the other worker can take a job over
			if err != nil {
				t.Error(err)
				return
			}
			for i := 1; i <= products; i++ {
				if err := q.AddURL(store.ProductURL(i)); err != nil {
					t.Error(err)
				}
			}
			if err := q.Run(c); err != nil {
				t.Errorf("worker %d: %v", w, err)
			}
			if err := cp.Close(); err != nil {
				t.Errorf("worker %d: checkpoint: %v", w, err)
			}
			if err := sink.Err(); err != nil {
				t.Errorf("worker %d: %v", w, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	s := stalled.Load() - 1
	if s < 0 {
		t.Fatal("no worker reached the product")
	}
	if n := store.CountPath(testserver.ProductPath(3)); n < 2 {
		t.Errorf("the product taken over was fetched %d times, want by each worker", n)
	}
	// A page fetched twice (the victim, or one slow enough under -race to
	// be taken over too) has one record in all: the other left out.
	extra := 0
	for i := 1; i <= products; i++ {
		extra += store.CountPath(testserver.ProductPath(i)) - 1
	}
	if d := sinks[s].Stats().Duplicates; d < 1 || int(d+sinks[1-s].Stats().Duplicates) != extra {
		t.Errorf("sinks %+v, %+v; want the stalled worker's record of the product taken over left out, one left out per second fetch (%d)",
			sinks[s].Stats(), sinks[1-s].Stats(), extra)
	}
	union := readLines(t, files[0]) + readLines(t, files[1])
	checkOnce(t, union, store, products)
	t.Logf("worker 0: %+v; worker 1: %+v; worker %d stalled", sinks[0].Stats(), sinks[1].Stats(), s)

	// The stalled worker killed in the middle of a write, then resumed:
	// its file is mended from its log in Redis.
	whole, _ := os.ReadFile(files[s])
	if err := os.WriteFile(files[s], whole[:len(whole)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := redis.OpenCheckpoint(client, "shop", opts)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := checkpoint.New(st, checkpoint.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	f, err := os.OpenFile(files[s], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sink, err := cp.Sink(f, checkpoint.SinkConfig{Worker: "w" + string(rune('0'+s))})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(files[s]); !bytes.Equal(got, whole) || sink.Stats().TornBytes == 0 {
		t.Errorf("resumed: file %q, stats %+v; want it whole again (%q)", got, sink.Stats(), whole)
	}
}

func startStoreT(t *testing.T, cfg testserver.Config) *testserver.Store {
	t.Helper()
	s, err := testserver.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func readLines(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkOnce requires out to be whole lines, one per product of store.
func checkOnce(t *testing.T, out string, store *testserver.Store, products int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != products {
		t.Errorf("%d lines in the union, want %d:\n%s", len(lines), products, out)
	}
	for i := 1; i <= products; i++ {
		if n := strings.Count(out, `"url":"`+store.ProductURL(i)+`"`); n != 1 {
			t.Errorf("%s: %d lines in the union, want 1", testserver.ProductPath(i), n)
		}
	}
}
