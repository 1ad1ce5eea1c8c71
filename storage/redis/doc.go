// Package redis keeps a Breakwater crawl's shared state in Redis, so that
// several crawler processes on several machines can work one crawl.
//
// This file set holds the job queue; the shared breaker state and the
// checkpoint backend will live beside it.
//
// # The queue
//
// A Queue hands out jobs (a URL, its domain, a serialised Colly request and
// its retry state) to any number of workers:
//
//	q, err := redis.NewQueue(client, "shop-crawl-2026-05-01")
//	q.Enqueue(ctx, &redis.Job{URL: "https://shop.example/p/1", Lane: redis.Critical})
//	for {
//		job, err := q.Claim(ctx)           // one round trip, atomic
//		if errors.Is(err, redis.ErrEmpty) { /* sleep until err.(*redis.EmptyError).Next */ }
//		switch outcome := fetch(job); {
//		case breakerOpen:   q.Park(ctx, job, reopensAt)  // no attempt spent
//		case outcome != nil: q.Fail(ctx, job, outcome)   // backoff, or dead letters
//		default:            q.Ack(ctx, job)
//		}
//	}
//
// Priority lanes with aging. The ready jobs are ordered by the time each
// became eligible plus its lane's offset: Critical starts a day ahead,
// Bulk an hour behind (WithAging). So a critical job enqueued behind a
// thousand bulk jobs is claimed first, yet a bulk job that has waited longer
// than the aging bound beats a fresh normal one and bulk work never starves.
// Eligibility is kept apart from priority: jobs that may not run yet (a
// delayed start, a backoff, a parked domain) wait in a second set ordered by
// their time and are moved into the ready order, atomically, by the claim
// that finds them due. A bulk job is therefore claimable at once when
// nothing else is waiting; its offset only orders it, it never delays it.
//
// Leases. Claim moves the job into an in-flight set scored by its lease
// deadline (WithVisibilityTimeout) and gives it a token. Only the holder of
// the token may Fail, Park or Extend the job; a late Ack, after the lease
// expired, still completes the job as long as nobody has claimed or
// rescheduled it since. A job whose worker died is taken back by the
// next Claim (or Reclaim) once its lease expires: that spends one attempt,
// so a job that keeps killing workers ends in the dead letters. Delivery is
// at least once.
//
// Retries. Fail adds an attempt, keeps the error, and schedules the retry
// after a full-jitter exponential backoff, uniform in
// [0, min(cap, base·2^(attempts-1))) (WithBackoff), so failures that happen
// together do not retry together. At MaxAttempts the job goes to the dead
// letters with its last error (Dead, RetryDead). Park re-queues a job for a
// given time without spending an attempt, for domains whose breaker is open.
//
// Keys and lifetime. Every key of a crawl is named
// "<namespace>:{<crawl>}:q:<part>": the braces are a Redis Cluster hash tag,
// so a crawl's keys share one slot, and two crawls on one Redis never see
// each other's jobs. Every change refreshes the TTL of all the crawl's keys
// (WithRetention, 7 days by default), so an abandoned crawl disappears by
// itself, and the dead letters are capped (WithDeadLetterLimit). See keys.go
// for the layout and lua/ for the scripts' contracts.
//
// Time. Eligibility, leases and aging are decided with the caller's clock
// (WithClock), passed into the scripts, not Redis TIME: tests are exact, and
// workers should run NTP. The jitter's random source is injectable too
// (WithRand).
//
// Failure. Every method takes a context, is bounded by WithCallTimeout, and
// never panics; when Redis cannot be reached the error wraps ErrUnavailable
// (and the cause) for errors.Is, and says what to do. Build the client with
// ContextTimeoutEnabled: true so that a deadline also cuts short a hung
// connection. A default go-redis client retries failed dials (about 2 s per
// call against a closed port); lower its MaxRetries and DialerRetries to
// fail faster.
//
// The tests run against a real Redis (see the redistest package).
package redis
