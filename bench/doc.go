// Command bench measures what Breakwater is worth, side by side, in one
// process and one run:
//
//	go run ./bench                      # the default scenarios, about a minute on 2 cores
//	go run ./bench -scenarios all       # adds ratelimit, ratelimit-503, hang-10s (~5 more minutes)
//	go run ./bench -scenarios degrade,empty -json
//
// Five clients crawl the same scenarios on local test stores
// (package testserver, every store its own port of 127.0.0.1). They are the
// same Colly collector (async, same timeout, the same page callback that
// saves a product when its title is found) and differ only in what is wired
// around it:
//
//	plain       Colly alone: the reference
//	retry       + the retry loop Colly users write: OnError → Request.Retry(), 5 times per URL,
//	              backoff 1 s, 2 s, 4 s, 8 s, 16 s (divided by -scale)
//	gobreaker   + sony/gobreaker/v2, a TwoStepCircuitBreaker per host wired by hand (Allow in
//	              OnRequest, done in OnScraped/OnError, default settings), + the retry loop
//	breakwater  + validate, breaker.Standard() and per-domain pacing of 2, + the retry loop for
//	              degraded outcomes (and the embedded checkpoint in the overhead scenario)
//	drop-in     the retry client with validate and breaker.Standard() added by breakwater.Use,
//	              nothing else changed: no pacing, no checkpoint, its own transport and loop
//
// The baselines and the drop-in use Colly's usual LimitRule{DomainGlob: "*",
// Parallelism: 2}, one pool of slots shared by every host; the recommended
// Breakwater wiring replaces it with a pace of 2 per domain, since the
// shared pool is how one slow site holds up all the others. The scenarios (the first four by default, the rest behind -scenarios):
//
//	degrade        one store, 300 pages queued up front, 503 from request 31 on:
//	               requests sent into the degradation, pages saved, wall time
//	hang           20 stores × 50 pages, one hangs from its 26th request: the time until every
//	               healthy store's pages are saved, against the same run without that store,
//	               and when the run ends
//	empty          a store answering every page with a 200 consent shell: requests sent
//	               before the client stops
//	overhead       5,000 healthy pages: pages per second against plain Colly
//	ratelimit      a token bucket, 10/s, burst 5, 429 + Retry-After: pages saved, share of
//	               429s, wall time against pages ÷ rate
//	ratelimit-503  the same answering 503 without Retry-After
//	hang-10s       hang with a real 10 s request timeout
//	durable        the overhead pages: the recommended wiring with its checkpoint file against
//	               Colly's queue and storage on Redis, pages per CPU-second (Redis's CPU counted)
//	broad          (by name only) 50,000 domains × 2 pages of 38 KB in memory, every extension
//	broad-small    (by name only) 1,000,000 domains × 2 pages of 1.5 KB: CPU added a page,
//	               heap per active domain
//
// It prints one table, scenario × client, with each goal of the issues met
// or MISSED as measured in that same run, or JSON with -json. Traffic goes to
// 127.0.0.1 only, every run is bounded in requests and time (-cap), and the
// stores are closed when it ends.
package main
