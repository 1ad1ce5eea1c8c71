// Package redis keeps a Breakwater crawl's shared state in Redis, so that
// several crawler processes on several machines can work one crawl. Each
// constructor takes a go-redis client (a ClusterClient too), the crawl's
// id and the same Config:
//
//   - NewCollyStorage: Colly's storage.Storage and queue.Storage in one, so
//     a crawl written with Colly's queue is distributed as it is, each URL
//     fetched by one worker, at least once.
//   - NewBreakerStore: the per-domain circuit breakers, shared.
//   - OpenCheckpoint: extensions/checkpoint's storage.Store, a
//     storage.OutputStore too, for its Sink.
//
// A worker:
//
//	cfg := redis.Config{VisibilityTimeout: 2 * time.Minute, Logger: log}
//	cs, err := redis.NewCollyStorage(client, "shop-2026-05-01", cfg)
//	bs, err := redis.NewBreakerStore(client, "shop-2026-05-01", cfg)
//	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Store: bs})
//	c := colly.NewCollector()
//	err = breakwater.Use(c, b, cs)
//	q, err := queue.New(4, cs)
//	q.AddURL("https://shop.example/") // every worker may: each URL is queued once per crawl
//	err = q.Run(c)                    // until no job is left anywhere in the crawl
//
// A crawl's keys share one Cluster hash tag (Config.Shards spreads them
// over several), expire once idle (Config.Retention) and go at once with
// DeleteCrawl. docs/redis.md covers a fleet of workers, Redis Cluster,
// sizing and the failure handling.
package redis
