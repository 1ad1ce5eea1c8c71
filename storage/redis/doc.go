// Package redis keeps a Breakwater crawl's shared state in Redis, so that
// several crawler processes on several machines can work one crawl.
//
// A worker joins a crawl with two constructors, each taking a go-redis
// client, the crawl's id and the same list of Options:
//
//   - NewCollyStorage: Colly's storage.Storage (visited set, cookies) and
//     queue.Storage (the frontier) in one: a crawl written with Colly's
//     queue package is distributed as it is, each URL fetched by one
//     worker, at least once. Its Stats and DeadLetters say what the whole
//     crawl has left and what it gave up on.
//   - NewBreakerStore: the per-domain circuit breakers, shared (a
//     breaker.Store). Every worker sees a trip at once; half-open probes
//     are limited across all workers together.
//
// A worker:
//
//	opts := []redis.Option{redis.WithVisibilityTimeout(2 * time.Minute), redis.WithLogger(log)}
//	cs, err := redis.NewCollyStorage(client, "shop-2026-05-01", opts...)
//	bs, err := redis.NewBreakerStore(client, "shop-2026-05-01", opts...)
//	b, err := breaker.New(breaker.Standard(), breaker.Config{Store: bs})
//	c := colly.NewCollector()
//	err = breakwater.Use(c, b, cs) // cs: Colly's storage, which request is which job, and each one's outcome
//	q, err := queue.New(4, cs)
//	q.AddURL("https://shop.example/") // every worker may: each URL is queued once per crawl
//	err = q.Run(c)                    // until no job is left anywhere in the crawl
//
// OpenCheckpoint is the third: extensions/checkpoint's storage.Store, for
// a crawl that keeps per-URL states and run metadata where every worker
// can reach them. DeleteCrawl removes a crawl's keys at once.
//
// # Shared breakers
//
// gobreaker's distributed breaker holds a Redis lock for the whole request,
// so workers sharing a domain take turns. Here nothing is held while a
// request is in flight: each circuit is the in-process circuit's state
// machine replayed by Lua scripts on three keys per domain (state, the
// window of outcomes with their latencies, and the probes' leases), and
// each Allow and each Record is one atomic round trip, with the profile
// passed in the arguments. The circuittest table and a differential test
// against the in-process circuit (thousands of random calls, same permits,
// refusals and transitions, down to the log line) hold them to the same
// semantics, whatever order the outcomes come back in: both windows keep
// the latest outcomes by the order their requests left (Redis numbers the
// tickets of every worker), so a synchronous collector, which records a
// page after the pages it visited, keeps the trip bound through a shared
// store too.
//
// A half-open probe holds its slot under a lease (WithProbeLease, 2 minutes
// by default): a worker that dies holding one frees it when the lease runs
// out. An idle domain's keys expire after WithRetention, an open one's never
// before its cooldown has passed. While Redis is unreachable a store fails
// closed (the default: Allow refuses with an error that matches both
// ErrUnavailable and breaker.ErrOpen and converts to a
// *breaker.CircuitOpenError, so the breaker parks the request) and tries
// Redis again once per backoff, or fails open (WithFailPolicy(FailOpen):
// in-process circuits decide until Redis answers). Each change is one log
// event.
//
// # Colly over Redis
//
// Colly calls IsVisited and then Visited, with nothing between, and its
// queue pops a request and forgets it. CollyStorage makes IsVisited an
// atomic claim and hands out leased jobs: a request's outcome, reported by
// the breaker (Observe, which breakwater.Use calls) or by Ack, Fail and Park, ends its
// job; a job whose worker died comes back after the visibility timeout,
// while a live worker extends the leases of the jobs it has under way,
// however long they wait at the breaker's gate. A crawl whose state
// vanishes from Redis (a restart without persistence, a flush) ends its
// workers with ErrStateLost, never as if the work were done. See
// CollyStorage for what at least once means here.
//
// # The queue under it
//
// The frontier is a job queue in Redis: each job carries its URL, its
// domain, the serialised Colly request and its retry state.
//
// Eligibility and order. Ready jobs are ordered by the time each became
// eligible. Jobs that may not run yet (a backoff, a parked domain) wait in
// a second set ordered by their time and are moved into the ready order,
// atomically, by the claim that finds them due.
//
// Leases. A claim moves the job into an in-flight set scored by its lease
// deadline (WithVisibilityTimeout) and gives it a token. Only the holder of
// the token may Fail or Park the job; a late Ack, after the lease expired,
// still completes the job as long as nobody has claimed or rescheduled it
// since. A job whose worker died is taken back by the next claim once its
// lease expires: that spends one attempt, so a job that keeps killing
// workers ends in the dead letters. Delivery is at least once. A claim
// sent again with its token (a client's retry after the answer was lost,
// as go-redis does by itself up to MaxRetries) hands out the job the first
// run leased instead of leasing a second one.
//
// Retries. Fail adds an attempt, keeps the error, and schedules the retry
// after a full-jitter exponential backoff, uniform in
// [0, min(cap, base·2^(attempts-1))) (WithBackoff), so failures that happen
// together do not retry together. At MaxAttempts (WithMaxAttempts) the job
// goes to the dead letters with its last error (DeadLetters). Park
// re-queues a job for a given time without spending an attempt, for
// domains whose breaker is open.
//
// # Keys and lifetime
//
// Every key of a crawl is named "<namespace>:{<crawl>}:<part>": the braces
// are a Redis Cluster hash tag, so a crawl's keys share one slot (the
// scripts touch several at once), and two crawls on one Redis never see
// each other's state: "redis-cli --scan --pattern 'bw:{<crawl>}*'" lists
// a crawl's keys, DeleteCrawl removes them. Every change refreshes the TTL
// of the keys it belongs with (WithRetention, 7 days by default), so an
// abandoned crawl disappears by itself, and the dead letters are capped
// (WithDeadLetterLimit).
//
// Redis Cluster. Every constructor takes a go-redis UniversalClient, so a
// ClusterClient works as a Client does (ParseClusterURL reads
// "redis+cluster://host:7000,host:7001"); the client follows MOVED and
// ASK, and a call the cluster turns away while it moves the crawl's slot
// (TRYAGAIN, or a MOVED after the client's redirects ran out) wraps
// ErrUnavailable and is retried like an outage. One slot means one master
// per crawl: WithShards(n) spreads the queue and visited set (by request
// ID) and the circuits (by domain) over n slots, chosen so that n shards
// land on n masters of an evenly split cluster. The tests run against a
// real three-master cluster they start, a slot moved mid-crawl included
// (redistest.NewCluster).
//
// Time. Eligibility, leases, cooldowns and probe leases are decided with
// the caller's clock (WithClock; the breaker's own clock for circuits),
// passed into the scripts, not Redis TIME: tests are exact, and workers
// should run NTP.
//
// Failure. Every call is bounded by WithCallTimeout and never panics; when
// Redis cannot be reached the error wraps ErrUnavailable (and the cause)
// for errors.Is, and says what to do. Build the client with
// ContextTimeoutEnabled: true so that a deadline also cuts short a hung
// connection. A default go-redis client retries failed dials (about 2 s per
// call against a closed port); lower its MaxRetries and DialerRetries to
// fail faster. After PoolSize failed dials in a row a go-redis pool fails
// new dials with the last error and probes once a second, so a client may
// take up to a second to notice that Redis is back.
//
// The tests run against a real Redis (see the redistest package).
package redis
