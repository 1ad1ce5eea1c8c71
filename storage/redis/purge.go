package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// ErrCrawlBusy is DeleteCrawl's refusal while a worker holds a lease.
var ErrCrawlBusy = errors.New("redis: the crawl's jobs are leased by running workers")

// DeleteCrawl deletes every key of crawl in namespace (DefaultNamespace
// when "") over shards shards (as Config.Shards) on every master, and
// returns how many it deleted. It refuses with ErrCrawlBusy while a
// worker holds an unexpired lease: stop the workers first.
func DeleteCrawl(ctx context.Context, c goredis.UniversalClient, namespace, crawl string, shards int) (int64, error) {
	if crawl == "" {
		return 0, errors.New("redis: DeleteCrawl: empty crawl id; give the id the workers were started with")
	}
	if namespace == "" {
		namespace = DefaultNamespace
	}
	prefixes := shardPrefixes(namespace, crawl, max(shards, 1))
	if len(prefixes) > 1 {
		// The checkpoint and run keys stay under the crawl's own tag.
		prefixes = append(prefixes, shardPrefixes(namespace, crawl, 1)...)
	}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	for _, p := range prefixes {
		n, err := c.ZCount(ctx, queueKeys(p)[keyInflight], now, "+inf").Result()
		if err != nil {
			return 0, fmt.Errorf("redis: DeleteCrawl %s: reading its leases: %w", crawl, err)
		}
		if n > 0 {
			return 0, fmt.Errorf("%w: %d jobs of crawl %s; stop them (SIGTERM) or wait for their leases to lapse", ErrCrawlBusy, n, crawl)
		}
	}
	var total int64
	for _, p := range prefixes {
		n, err := deleteMatching(ctx, c, p+"*")
		total += n
		if err != nil {
			return total, fmt.Errorf("redis: DeleteCrawl %s: %w (%d keys deleted so far; run it again)", crawl, err, total)
		}
	}
	return total, nil
}

// deleteMatching unlinks the keys matching pattern (one hash tag) on
// every master.
func deleteMatching(ctx context.Context, c goredis.UniversalClient, pattern string) (int64, error) {
	one := func(ctx context.Context, node goredis.UniversalClient) (int64, error) {
		var n int64
		for cursor := uint64(0); ; {
			keys, next, err := node.Scan(ctx, cursor, pattern, 1000).Result()
			if err == nil && len(keys) > 0 { // each page unlinked as it comes
				var d int64
				d, err = c.Unlink(ctx, keys...).Result()
				n += d
			}
			if cursor = next; err != nil || cursor == 0 {
				return n, err
			}
		}
	}
	cc, ok := c.(*goredis.ClusterClient)
	if !ok {
		return one(ctx, c)
	}
	var total atomic.Int64 // ForEachMaster runs the masters at once
	err := cc.ForEachMaster(ctx, func(ctx context.Context, node *goredis.Client) error {
		n, err := one(ctx, node)
		total.Add(n)
		return err
	})
	return total.Load(), err
}
