package redis_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// countKeys counts the keys matching pattern, on every master of a cluster.
func countKeys(t *testing.T, c goredis.UniversalClient, pattern string) int {
	t.Helper()
	ctx := context.Background()
	var n atomic.Int64 // ForEachMaster asks the masters at once
	count := func(node goredis.UniversalClient) error {
		keys, err := node.Keys(ctx, pattern).Result()
		n.Add(int64(len(keys)))
		return err
	}
	var err error
	if cc, ok := c.(*goredis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(_ context.Context, node *goredis.Client) error { return count(node) })
	} else {
		err = count(c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return int(n.Load())
}

// DeleteCrawl deletes every key of one crawl, over all its shards and, on
// a cluster, every master; another crawl's keys stay. It refuses while a
// job of the crawl is leased.
func TestDeleteCrawlDeletesOnlyItsCrawl(t *testing.T) {
	client, ns := redistest.New(t)
	cluster := redistest.NewCluster(t, 3)
	for _, tc := range []struct {
		name   string
		client goredis.UniversalClient
		shards int
	}{{"server", client, 1}, {"server-3-shards", client, 3}, {"cluster-3-shards", cluster.Client(t), 3}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ns := ns + "-" + tc.name
			for _, crawl := range []string{"keep", "drop"} {
				q, err := redis.NewQueue(tc.client, crawl, redis.Config{Namespace: ns, Shards: tc.shards})
				if err != nil {
					t.Fatal(err)
				}
				for i := range 20 {
					u := fmt.Sprintf("http://d%d.example/p%d", i%4, i)
					if _, err := q.Enqueue(ctx, &redis.Job{URL: u}); err != nil {
						t.Fatal(err)
					}
				}
				if crawl == "drop" {
					j, err := q.Claim(ctx)
					if err != nil || j == nil {
						t.Fatalf("claim: %v %v", j, err)
					}
					if _, err := redis.DeleteCrawl(ctx, tc.client, ns, "drop", tc.shards); !errors.Is(err, redis.ErrCrawlBusy) {
						t.Fatalf("DeleteCrawl with a job leased: %v, want ErrCrawlBusy", err)
					}
					if err := q.Ack(ctx, j); err != nil {
						t.Fatal(err)
					}
				}
			}
			before := countKeys(t, tc.client, ns+":*")
			kept := countKeys(t, tc.client, ns+":{keep*")
			n, err := redis.DeleteCrawl(ctx, tc.client, ns, "drop", tc.shards)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 || countKeys(t, tc.client, ns+":{drop*") != 0 {
				t.Errorf("deleted %d keys, %d of the crawl left", n, countKeys(t, tc.client, ns+":{drop*"))
			}
			if got := countKeys(t, tc.client, ns+":{keep*"); got != kept || kept == 0 || before != kept+int(n) {
				t.Errorf("the other crawl's keys: %d before, %d after (all keys before %d, deleted %d)", kept, got, before, n)
			}
		})
	}
}
