package redis_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
)

// One shard (the default) keeps the unsharded key layout, byte for byte.
func TestOneShardKeepsTheKeyLayout(t *testing.T) {
	client, _ := redistest.New(t)
	for _, opts := range []redis.Config{{}, {Shards: 1}} {
		q, err := redis.NewQueue(client, "shop", opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(q.Keys(), " "); got != "bw:{shop}:q:ready bw:{shop}:q:delayed bw:{shop}:q:inflight bw:{shop}:q:dead bw:{shop}:q:jobs bw:{shop}:q:leases" {
			t.Errorf("queue keys %s", got)
		}
		bs, err := redis.NewBreakerStore(client, "shop", opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(bs.(*redis.BreakerStore).Keys("a.example"), " "); got != "bw:{shop}:b:s:a.example bw:{shop}:b:w:a.example bw:{shop}:b:p:a.example" {
			t.Errorf("breaker keys %s", got)
		}
		cs, err := redis.NewCollyStorage(client, "shop", opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(cs.Keys()[6:], " "); got != "bw:{shop}:c:visited bw:{shop}:c:cookies bw:{shop}:c:run" {
			t.Errorf("colly keys %s", got)
		}
	}
}

func TestShardsOutOfRangeAreRejected(t *testing.T) {
	client, _ := redistest.New(t)
	for _, n := range []int{-1, redis.MaxShards + 1} {
		if _, err := redis.NewQueue(client, "shop", redis.Config{Shards: n}); !errors.Is(err, redis.ErrInvalidConfig) {
			t.Errorf("Config.Shards %d: %v, want ErrInvalidConfig", n, err)
		}
	}
}

// Three shards, each under a tag of its own in its own third of the slot
// space; a domain's three circuit keys share one tag.
func TestShardsSpreadTheCrawlOverSlots(t *testing.T) {
	client, ns := redistest.New(t)
	q, err := redis.NewQueue(client, "shop", redis.Config{Namespace: ns, Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	keys := q.Keys()
	if len(keys) != 18 {
		t.Fatalf("%d keys, want 6 per shard", len(keys))
	}
	for i := range 3 {
		slot := redistest.Slot(keys[6*i])
		if slot < i*16384/3 || slot >= (i+1)*16384/3 {
			t.Errorf("shard %d in slot %d, outside its third", i, slot)
		}
		for _, k := range keys[6*i : 6*i+6] {
			if redistest.Slot(k) != slot || !strings.Contains(k, "}:s:q:") {
				t.Errorf("shard %d key %s (slot %d), want slot %d and the sharded layout", i, k, redistest.Slot(k), slot)
			}
		}
	}
	bs, err := redis.NewBreakerStore(client, "shop", redis.Config{Namespace: ns, Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	used := map[int]bool{}
	for d := range 30 {
		k := bs.(*redis.BreakerStore).Keys(fmt.Sprintf("d%d.example", d))
		if redistest.Slot(k[0]) != redistest.Slot(k[1]) || redistest.Slot(k[0]) != redistest.Slot(k[2]) {
			t.Errorf("a domain's circuit keys in several slots: %v", k)
		}
		used[redistest.Slot(k[0])] = true
	}
	if len(used) != 3 {
		t.Errorf("30 domains' circuits in %d slots, want 3", len(used))
	}
}

// Over three shards, two workers claiming at once get every job exactly
// once; Stats and Dead add the shards up, newest dead first, and
// RetryDead finds a dead letter's shard by its ID.
func TestShardedQueueHandsOutEveryJobOnce(t *testing.T) {
	f := newFixture(t, redis.Config{Shards: 3, MaxAttempts: 1})
	const n = 90
	var jobs []*redis.Job
	for i := range n {
		jobs = append(jobs, &redis.Job{ID: fmt.Sprintf("j%02d", i), URL: fmt.Sprintf("https://d%d.example/%d", i%7, i)})
	}
	enqueue(t, f.q, jobs...)
	if st := stats(t, f.q); st.Ready != n {
		t.Fatalf("stats after enqueue %+v, want %d ready", st, n)
	}
	other := f.queue(t, redistest.Client(t), f.crawl)
	var mu sync.Mutex
	seen := map[string]int{}
	var claimed [2][]*redis.Job
	var wg sync.WaitGroup
	for w, q := range []*redis.Queue{f.q, other} {
		wg.Go(func() {
			for {
				j, err := q.Claim(ctxT(t))
				if errors.Is(err, redis.ErrEmpty) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[j.ID]++
				mu.Unlock()
				claimed[w] = append(claimed[w], j)
			}
		})
	}
	wg.Wait()
	for _, j := range jobs {
		if seen[j.ID] != 1 {
			t.Errorf("job %s claimed %d times, want once", j.ID, seen[j.ID])
		}
	}
	if st := stats(t, f.q); st.InFlight != n || st.Ready != 0 {
		t.Fatalf("stats after the claims %+v, want %d in flight", st, n)
	}
	// Half acked, half dead (one attempt each), dying one by one.
	for w := range claimed {
		for i, j := range claimed[w] {
			if i%2 == 0 {
				if err := other.Ack(ctxT(t), j); err != nil {
					t.Fatal(err)
				}
				continue
			}
			f.clock.Advance(time.Millisecond) // each death later than the last
			if err := f.q.Fail(ctxT(t), j, errors.New("boom")); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := stats(t, f.q)
	if st.Pending() != 0 || st.Dead == 0 {
		t.Fatalf("stats after ack and fail %+v, want nothing pending and some dead", st)
	}
	dead, err := f.q.Dead(ctxT(t), 5)
	if err != nil || len(dead) != 5 {
		t.Fatalf("Dead(5): %d, %v", len(dead), err)
	}
	for i := 1; i < len(dead); i++ {
		if dead[i].FailedAt.After(dead[i-1].FailedAt) {
			t.Errorf("dead letters not newest first across the shards: %v after %v", dead[i].FailedAt, dead[i-1].FailedAt)
		}
	}
	all, err := f.q.Dead(ctxT(t), 1000)
	if err != nil || int64(len(all)) != st.Dead {
		t.Fatalf("Dead(1000): %d, %v; want %d", len(all), err, st.Dead)
	}
	for _, d := range all {
		if err := other.RetryDead(ctxT(t), d.ID); err != nil {
			t.Fatalf("RetryDead(%s): %v", d.ID, err)
		}
	}
	if st := stats(t, f.q); st.Ready != int64(len(all)) || st.Dead != 0 {
		t.Fatalf("stats after RetryDead %+v, want %d ready", st, len(all))
	}
}
