package redistest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
)

func TestClusterServesKeysAndMovesASlot(t *testing.T) {
	c := redistest.NewCluster(t, 3)
	cc := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 20; i++ {
		key := fmt.Sprintf("k:{tag}:%d", i)
		if err := cc.Set(ctx, key, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	want, err := c.Node(t, 0).ClusterKeySlot(ctx, "k:{tag}:1").Result()
	if err != nil {
		t.Fatal(err)
	}
	slot := redistest.Slot("k:{tag}:1")
	if int64(slot) != want {
		t.Fatalf("Slot = %d, CLUSTER KEYSLOT = %d", slot, want)
	}
	from := c.Owner(t, slot)
	to := (from + 1) % c.Masters()
	steps := 0
	moved := c.MigrateSlot(t, slot, to, func(int) { steps++ })
	if moved != 20 || steps != 20 {
		t.Fatalf("moved %d keys in %d steps, want 20", moved, steps)
	}
	if got := c.Owner(t, slot); got != to {
		t.Fatalf("slot %d on node %d after the migration, want %d", slot, got, to)
	}
	for i := 0; i < 20; i++ { // through MOVED
		v, err := cc.Get(ctx, fmt.Sprintf("k:{tag}:%d", i)).Int()
		if err != nil || v != i {
			t.Fatalf("key %d after the migration: %v, %v", i, v, err)
		}
	}
	if n, _ := c.Node(t, to).DBSize(ctx).Result(); n != 20 {
		t.Fatalf("target holds %d keys, want 20", n)
	}
}
