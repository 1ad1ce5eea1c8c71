package redis_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
)

func TestClaimHandsEachJobToExactlyOneWorker(t *testing.T) {
	const jobs, workers = 2000, 8
	f := newFixture(t, redis.Config{})
	batch := make([]*redis.Job, jobs)
	for i := range batch {
		batch[i] = job(fmt.Sprintf("j%04d", i))
	}
	enqueue(t, f.q, batch...)

	var mu sync.Mutex
	claimedBy := map[string][]int{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		q := f.queue(t, redistest.Client(t), f.crawl) // own client, own connections
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j, err := q.Claim(ctxT(t))
				if errors.Is(err, redis.ErrEmpty) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				claimedBy[j.ID] = append(claimedBy[j.ID], w)
				mu.Unlock()
				if err := q.Ack(ctxT(t), j); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(claimedBy) != jobs {
		t.Fatalf("%d distinct jobs claimed, want %d", len(claimedBy), jobs)
	}
	busy := map[int]int{}
	for id, ws := range claimedBy {
		if len(ws) != 1 {
			t.Errorf("job %s claimed %d times, by workers %v", id, len(ws), ws)
		}
		busy[ws[0]]++
	}
	if len(busy) < 2 {
		t.Errorf("only workers %v claimed anything: the race was not exercised", busy)
	}
	if s := stats(t, f.q); s != (redis.Stats{}) {
		t.Errorf("after acking everything: %+v, want all zero", s)
	}
}

func TestClaimGivesTheStoredJobBack(t *testing.T) {
	f := newFixture(t, redis.Config{})
	in := &redis.Job{
		ID:      "p1",
		URL:     "https://Shop.Example:8443/p/1?x=1",
		Request: []byte{0, 1, 2, 0xff, '"', '/', '\\'},
	}
	enqueue(t, f.q, in)
	if in.Domain != "shop.example:8443" {
		t.Errorf("Domain = %q, want host with port, lower-cased", in.Domain)
	}
	if in.MaxAttempts != redis.DefaultMaxAttempts || !in.EnqueuedAt.Equal(start) {
		t.Errorf("defaults not filled: MaxAttempts %d, EnqueuedAt %v", in.MaxAttempts, in.EnqueuedAt)
	}
	got := claim(t, f.q)
	if got.ID != in.ID || got.URL != in.URL || got.Domain != in.Domain ||
		got.MaxAttempts != in.MaxAttempts || string(got.Request) != string(in.Request) || !got.EnqueuedAt.Equal(in.EnqueuedAt) {
		t.Errorf("claimed %+v\nenqueued %+v", got, in)
	}
	if want := start.Add(redis.DefaultVisibilityTimeout); !got.LeaseUntil.Equal(want) {
		t.Errorf("LeaseUntil = %v, want %v", got.LeaseUntil, want)
	}
}

func TestEnqueueSkipsIDsAlreadyInTheCrawl(t *testing.T) {
	f := newFixture(t, redis.Config{})
	enqueue(t, f.q, job("a"))
	n, err := f.q.Enqueue(ctxT(t), job("a"), job("b"), job("b"))
	if err != nil || n != 1 {
		t.Fatalf("Enqueue = %d, %v; want 1 new (a is queued, b twice)", n, err)
	}
	j := claim(t, f.q)
	n, err = f.q.Enqueue(ctxT(t), job(j.ID))
	if err != nil || n != 0 {
		t.Errorf("re-enqueue of in-flight %s = %d, %v; want 0", j.ID, n, err)
	}
	if s := stats(t, f.q); s.Ready != 1 || s.InFlight != 1 {
		t.Errorf("stats %+v, want 1 ready, 1 in flight", s)
	}
}

func TestEnqueueRejectsInvalidJobsBeforeWritingAny(t *testing.T) {
	f := newFixture(t, redis.Config{})
	for _, bad := range []*redis.Job{
		nil,
		{URL: ""},
		{URL: "/relative/path"},
		{URL: "https://ok.example/", MaxAttempts: -1},
	} {
		n, err := f.q.Enqueue(ctxT(t), job("good"), bad)
		if !errors.Is(err, redis.ErrInvalidJob) || n != 0 {
			t.Errorf("Enqueue(%+v) = %d, %v; want 0, ErrInvalidJob", bad, n, err)
		}
	}
	if s := stats(t, f.q); s.Pending() != 0 {
		t.Errorf("a rejected batch wrote jobs: %+v", s)
	}
}

func TestEnqueueLargeBatchInChunks(t *testing.T) {
	f := newFixture(t, redis.Config{})
	batch := make([]*redis.Job, 1000)
	for i := range batch {
		batch[i] = &redis.Job{URL: fmt.Sprintf("https://shop.example/%d", i)} // random IDs
	}
	enqueue(t, f.q, batch...)
	seen := map[string]bool{}
	for _, j := range batch {
		if j.ID == "" || seen[j.ID] {
			t.Fatalf("generated ID %q empty or repeated", j.ID)
		}
		seen[j.ID] = true
	}
	if s := stats(t, f.q); s.Ready != 1000 {
		t.Errorf("ready = %d, want 1000", s.Ready)
	}
}
