// Package metrics exports a Breakwater crawl to Prometheus: each domain's
// circuit, outcomes, refusals, latency, pace and adaptive timeout, and the
// depth of its queue and checkpoint. It is the only Breakwater package that
// imports Prometheus; the breaker, the validator, the checkpoint stores and
// the root package do not (a test runs go list -deps to prove it).
//
//	reg := prometheus.NewRegistry()
//	m, err := metrics.New(reg)
//	b, err := breaker.New(breaker.Standard(), breaker.Config{Logger: log})
//	err = breakwater.Use(c, v, b, m) // m follows b's events
//	err = m.Watch(b)
//	srv, err := metrics.Serve(ctx, ":9090", reg) // GET /metrics until ctx is done
//
// # Two sources
//
// Events only hooks can see come through Observe (OnTransition,
// OnAttempt, OnDegrading): transitions with their reason, latency-slope
// warnings, and every attempt's latency in a histogram. Each hook is a few
// atomic operations and never blocks.
//
// Everything the breaker already counts is read from Breaker.Stats when
// Prometheus scrapes, not counted a second time: the exported outcome and
// refusal counters are the breaker's own numbers. Queues and checkpoints
// are read at scrape time too, through two small interfaces (Queue,
// Checkpoint), so the Redis queue or a storage.Store plugs in without this
// package importing it.
//
// # Metrics
//
// All names start with breakwater_. Per domain (label domain, the host
// with its port, as the breaker keys it):
//
//	breaker_state{state}                  gauge: 1 for the current state (closed, open, half-open), 0 for the others
//	breaker_info{profile}                 gauge: 1; the profile the domain uses
//	breaker_trips_total                   counter: times the circuit opened
//	breaker_retry_at_seconds              gauge: while open, when it may be probed (Unix seconds)
//	breaker_transitions_total{from,to,reason}  counter (hook)
//	degrading_total                       counter: latency-slope warnings (hook)
//	outcomes_total{class}                 counter: success, degraded, invalid, throttled, blocked, gone, client_error, excluded
//	refused_total                         counter: refused by an open circuit, never sent
//	request_duration_seconds              histogram (hook): gate to outcome, every attempt that left; buckets 10 ms to 60 s
//	success_ratio                         gauge: successes among the latest outcomes
//	median_latency_seconds                gauge: median latency of the latest successes
//	pace_limit                            gauge: in-flight cap now (0: none of Breakwater's own)
//	pace_gap_seconds                      gauge: least gap between request starts now
//	pace_in_flight                        gauge: requests between gate and outcome
//	pace_halted                           gauge: 1 while a Retry-After halts the domain
//	pace_pauses_total                     counter: Retry-After pauses
//	pace_paused_seconds_total             counter: time spent halted
//	adaptive_timeout_seconds              gauge: the adaptive timeout in force (0: none yet)
//
// Per queue (label queue) and per checkpoint (label checkpoint):
//
//	queue_jobs{state}                     gauge: ready, delayed, in-flight
//	queue_dead_letters                    gauge: jobs given up on
//	queue_up                              gauge: 1 if the depth could be read at this scrape
//	checkpoint_urls{state}                gauge: pending, in-flight, done, failed, parked, dead
//	checkpoint_up                         gauge: 1 if the counts could be read
//
// A useful alert: breakwater_breaker_state{state="open"} == 1 for long, or
// rate(breakwater_outcomes_total{class="blocked"}[5m]) above zero (fix the
// client, not the target).
//
// # Cardinality
//
// A domain with series of its own has about 23 from a scrape and up to 14
// (the latency histogram) and a few transitions from the hooks. So that a
// broad crawl does not drown Prometheus, at most DefaultDomainSeries (150)
// domains get them (WithDomainSeries): at each scrape the domains that are
// not closed and healthy (open, half-open, paused, failing, throttled),
// worst first, then the busiest healthy ones; the hooks label the first
// 150 domains they see and count the rest under domain="_other". Every
// domain is counted in:
//
//	domains{state}                        gauge: domains by circuit state (compacted idle ones are closed)
//	domains_compacted                     gauge: idle domains compacted by the breaker
//	domains_unhealthy                     gauge: domains not closed and healthy
//	all_outcomes_total{class}             counter: attempts by class over every domain
//	all_refused_total                     counter: refusals over every domain
//	all_trips_total                       counter: trips over every domain
//
// A crawl over 150 domains or fewer has every domain's series, as before;
// WithDomainSeries(-1) gives every domain its own at any size. At
// 1,000,000 domains a scrape returns about 5,600 series in 25 ms
// (BenchmarkGatherBroad). No label takes a URL, a path or an error text.
//
// With a shared breaker store (storage/redis) the state and the trips are
// the crawl's, seen by every worker; outcomes, refusals, latency and pace
// are this process's. Give each worker's metrics an instance label, as
// Prometheus does by target.
//
// # Serving
//
// Serve listens before it returns (a port in use is an error at once) and
// stops when its context is done. Any address the operator gives is used
// as given: ":9090" is every interface, "127.0.0.1:9090" only this machine.
// A crawl that exits within one scrape interval of its end may never have
// its last numbers scraped; keep the process up a scrape longer, or read
// the final report instead.
package metrics
