package redis_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/storage/storagetest"
)

func openCheckpoint(t *testing.T, ns, crawl string) *redis.Checkpoint {
	t.Helper()
	client := redistest.Client(t)
	cp, err := redis.OpenCheckpoint(client, crawl, redis.Config{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return cp.(*redis.Checkpoint)
}

func TestCheckpointConformance(t *testing.T) {
	t.Parallel() // a long test of its own keys or server: overlap it with the others
	storagetest.Run(t, func(t *testing.T) storage.Store {
		_, prefix := redistest.New(t)
		return openCheckpoint(t, prefix, "crawl-1")
	})
}

func TestCheckpointReopen(t *testing.T) {
	_, prefix := redistest.New(t)
	storagetest.Reopen(t, func(t *testing.T, name string) storage.Store {
		return openCheckpoint(t, prefix, name)
	})
}

func TestCheckpointRefusesKeysThatAreNotACheckpoint(t *testing.T) {
	client, prefix := redistest.New(t)
	ctx := context.Background()
	cp := openCheckpoint(t, prefix, "crawl-1")
	keys := cp.Keys()
	cp.Close()
	if err := client.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.Set(ctx, keys[0], "somebody else's value", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := redis.OpenCheckpoint(client, "crawl-1", redis.Config{Namespace: prefix}); !errors.Is(err, storage.ErrNotCheckpoint) {
		t.Fatalf("open over a string key: %v, want ErrNotCheckpoint", err)
	}
	if v, _ := client.Get(ctx, keys[0]).Result(); v != "somebody else's value" {
		t.Fatalf("the foreign key was changed to %q", v)
	}
}

func TestCheckpointRefusesANewerFormat(t *testing.T) {
	client, prefix := redistest.New(t)
	cp := openCheckpoint(t, prefix, "crawl-1")
	info := cp.Keys()[3]
	if err := client.HSet(context.Background(), info, "format", redis.CheckpointFormat+1).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := redis.OpenCheckpoint(client, "crawl-1", redis.Config{Namespace: prefix}); !errors.Is(err, storage.ErrNewerFormat) {
		t.Fatalf("open of a newer format: %v, want ErrNewerFormat", err)
	}
}

// Two workers' stores on separate clients see each other's records and
// draw Seqs from one sequence.
func TestCheckpointIsSharedByWorkers(t *testing.T) {
	_, prefix := redistest.New(t)
	a, b := openCheckpoint(t, prefix, "crawl-1"), openCheckpoint(t, prefix, "crawl-1")
	var wg sync.WaitGroup
	for w, s := range []*redis.Checkpoint{a, b} {
		wg.Go(func() {
			for i := range 200 {
				if err := s.Put(storage.Record{ID: uint64(w*1000 + i), URL: "http://shop.test/" + strconv.Itoa(i), State: storage.Pending}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	seqs := map[uint64]bool{}
	if err := b.Scan(func(r storage.Record) error { seqs[r.Seq] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 400 {
		t.Fatalf("%d distinct Seqs for 400 records from two workers", len(seqs))
	}
	if err := a.Put(storage.Record{ID: 1, State: storage.Done}); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := b.Get(1); err != nil || !ok || r.State != storage.Done {
		t.Fatalf("the other worker reads %+v, %v, %v; want done", r, ok, err)
	}
}

func TestCheckpointReportsAnUnreachableRedis(t *testing.T) {
	client := (&ownServer{port: portOf(t, closedPort(t))}).clientFor(t)
	if _, err := redis.OpenCheckpoint(client, "crawl-1", redis.Config{CallTimeout: 200 * time.Millisecond}); !errors.Is(err, redis.ErrUnavailable) {
		t.Fatalf("open against a closed port: %v, want ErrUnavailable", err)
	}
}

// BenchmarkCheckpointPut is one record's state change, as a crawl makes a
// few per URL.
func BenchmarkCheckpointPut(b *testing.B) {
	client, prefix := redistest.New(b)
	rt := &roundTrips{}
	client.AddHook(rt)
	cp, err := redis.OpenCheckpoint(client, "bench", redis.Config{Namespace: prefix})
	if err != nil {
		b.Fatal(err)
	}
	req := make([]byte, 400)
	b.ReportAllocs()
	start := rt.n.Load()
	began := time.Now()
	for i := 0; b.Loop(); i++ {
		if err := cp.Put(storage.Record{ID: uint64(i % 10000), URL: "https://shop.example/p", State: storage.State(1 + i%3), Request: req}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "puts/s")
	b.ReportMetric(float64(rt.n.Load()-start)/float64(b.N), "roundtrips/put")
}
