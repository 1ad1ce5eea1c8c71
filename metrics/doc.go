// Package metrics exports a Breakwater crawl to Prometheus: each domain's
// circuit, outcomes, refusals, latency, pace and adaptive timeout, and the
// depth of its queue and checkpoint. It is the only Breakwater package that
// imports Prometheus; the breaker, the validator, the checkpoint stores and
// the root package do not (a test runs go list -deps to prove it).
//
//	reg := prometheus.NewRegistry()
//	m, err := metrics.New(reg)
//	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Logger: log})
//	err = breakwater.Use(c, v, b, m) // m follows b
//	srv, err := metrics.Serve(ctx, ":9090", reg) // GET /metrics until ctx is done
//
// What the breaker counts is read from it at each scrape, and so are
// queues and checkpoints (WatchQueue, WatchCheckpoint). At most
// Config.DomainSeries domains get series of their own.
package metrics
