package redis

import (
	"context"
	"fmt"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
)

// A worker's claims go round the shards: while every shard has ready
// jobs, no shard gives two jobs in a row, and each gives a third.
func TestClaimsGoRoundTheShards(t *testing.T) {
	client, prefix := redistest.New(t)
	q, err := newQueue(client, "crawl-1", Config{Namespace: prefix, Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	per := [3]int{}
	var jobs []*queueJob
	for i := 0; per[0] < 10 || per[1] < 10 || per[2] < 10; i++ {
		id := fmt.Sprintf("j%d", i)
		if s := shardOf(id, 3); per[s] < 10 {
			per[s]++
			jobs = append(jobs, &queueJob{ID: id, URL: "https://shop.example/" + id})
		}
	}
	if _, err := q.Enqueue(ctx, jobs...); err != nil {
		t.Fatal(err)
	}
	got := [3]int{}
	last := -1
	for range 30 {
		j, err := q.Claim(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s := shardOf(j.ID, 3)
		if s == last {
			t.Fatalf("two claims in a row from shard %d", s)
		}
		last = s
		got[s]++
	}
	if got != [3]int{10, 10, 10} {
		t.Fatalf("claims per shard %v, want 10 each", got)
	}
}

// The shards' tags land in distinct, evenly spaced parts of the slot
// space for any n, and the same crawl and n always give the same tags.
func TestShardPrefixesAreSpreadAndStable(t *testing.T) {
	for _, n := range []int{2, 3, 4, 6, 16, MaxShards} {
		p := shardPrefixes("bw", "crawl", n)
		again := shardPrefixes("bw", "crawl", n)
		width := 16384 / n
		for i, k := range p {
			if again[i] != k {
				t.Fatalf("n=%d shard %d: %s then %s", n, i, k, again[i])
			}
			slot := redistest.Slot(k + "q:ready")
			if slot < i*width || slot >= (i+1)*width {
				t.Errorf("n=%d shard %d (%s) in slot %d, outside [%d, %d)", n, i, k, slot, i*width, (i+1)*width)
			}
		}
	}
}
