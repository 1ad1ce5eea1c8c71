// Package redis keeps a Breakwater crawl's shared state in Redis, so that
// several crawler processes on several machines can work one crawl.
//
// A worker joins a crawl with constructors that each take a go-redis
// client (a ClusterClient too), the crawl's id and the same Config:
//
//   - NewCollyStorage: Colly's storage.Storage (visited set, cookies) and
//     queue.Storage (the frontier) in one: a crawl written with Colly's
//     queue package is distributed as it is, each URL fetched by one
//     worker, at least once.
//   - NewBreakerStore: the per-domain circuit breakers, shared (a
//     circuit.Store). Every worker sees a trip at once; half-open probes
//     are limited across all workers together.
//   - OpenCheckpoint: extensions/checkpoint's storage.Store, for a crawl
//     that keeps per-URL states and run metadata where every worker can
//     reach them.
//
// A worker:
//
//	cfg := redis.Config{VisibilityTimeout: 2 * time.Minute, Logger: log}
//	cs, err := redis.NewCollyStorage(client, "shop-2026-05-01", cfg)
//	bs, err := redis.NewBreakerStore(client, "shop-2026-05-01", cfg)
//	b, err := breaker.New(breaker.Standard(), breaker.Config{Store: bs})
//	c := colly.NewCollector()
//	err = breakwater.Use(c, b, cs) // cs: Colly's storage, which request is which job, and each one's outcome
//	q, err := queue.New(4, cs)
//	q.AddURL("https://shop.example/") // every worker may: each URL is queued once per crawl
//	err = q.Run(c)                    // until no job is left anywhere in the crawl
//
// A crawl's keys share one Redis Cluster hash tag (Config.Namespace;
// Config.Shards spreads them over several) and expire once idle
// (Config.Retention);
// DeleteCrawl removes them at once. What happens while Redis is unreachable
// is on Config.FailOpen, Config.MaxOutage and ErrUnavailable. docs/redis.md in the
// repository covers a fleet of workers, Redis Cluster and sizing; the tests
// run against a real Redis and a real cluster (see the redistest package).
package redis
