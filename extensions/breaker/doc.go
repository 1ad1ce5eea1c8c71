// Package breaker is Breakwater's per-domain circuit breaker for Colly.
//
// A crawl over many sites should notice when one of them degrades, stop
// sending it traffic while the others keep flowing, probe it again after a
// cooldown, and never count its own mistakes against the site. A Breaker
// keeps one three-state circuit per domain (the URL's host, lower-cased,
// port included):
//
//   - Closed lets requests through and records each outcome in a window of
//     the last Profile.WindowSize counted outcomes, latest by the order
//     their requests left (synchronous Colly records a page after the
//     pages it visited; its late success pushes out no later failure).
//     It trips as soon as the failures in the window reach the count that
//     trips a full window
//     (Profile.FailureThreshold × Profile.WindowSize, rounded up: 10 for
//     Standard()), full window or not; so do
//     Profile.ConsecutiveFailures failures in a row, if set.
//   - Open refuses every request, locally and in well under a microsecond,
//     until Profile.Cooldown has passed.
//   - HalfOpen lets at most Profile.HalfOpenProbes requests be in flight at
//     once. One failed probe re-opens; all passing closes and clears the
//     window.
//
// What counts is decided per outcome (see Classify): timeouts,
// refused or reset connections, 5xx, truncated bodies and DNS failures are
// Degraded, and a 2xx the Validator rejects is Invalid; both count as
// failures. A 429 is Throttled: it pauses the domain until its Retry-After
// and the URL is sent again, but never trips. 403 (Blocked) and 404/410
// (Gone) never trip either; throttled and blocked answers have their own
// counters and a warning event when they keep coming.
//
// # Setting it up
//
// New takes the profile every domain starts from (Conservative(),
// Standard() or Aggressive(), each call a fresh copy to change as needed)
// and any number of With(Config): the store, clock, logger, validator,
// per-domain profiles, pacing, the fleet guard and the hooks
// (OnTransition, OnRefused, OnAttempt, OnDegrading). Extensions such as
// extensions/checkpoint and metrics hand theirs over as Options to add to
// the user's. Without a Config the breaker keeps its circuits in this
// process, reads the system clock and logs nothing.
//
// # Where the decision is taken
//
// Register wires the breaker into a collector. The gate is OnRequestHeaders,
// which Colly runs after a LimitRule slot is acquired and right before the
// client sends: asked only in OnRequest, every queued request would be
// allowed before the first failure came back, and all of them would go out
// into the outage (measured with gobreaker wired that way: 270 of 270). A
// refused request never reaches the network and is not a failure of the
// site; it is counted and handed to the Config.OnRefused hooks with a
// *CircuitOpenError naming the domain and when it may be probed again, and
// the user's OnError sees that error (errors.Is(err, ErrOpen)).
//
// The bound holds in every wiring: a domain never has more requests in
// flight than its circuit could still stop (the failures that trip it less the
// failures in its window; one until it has answered well once), and a
// status or transport failure is recorded inside Colly's LimitRule slot,
// before any user callback. So at most that many requests reach a site
// after it starts failing, whatever LimitRules, pacing or retry loop the
// scraper has. Register wraps the transport the collector already has.
//
// # Slowing down before stopping
//
// Next to each circuit sits a pace (Pacing): the most requests in flight to
// the domain and the least gap between them. A 429, or a 503 with
// Retry-After, halts the domain until then and, once per throttle episode,
// multiplies its pace down, never past Pacing.MaxGap; clean successes raise
// it step by step, never past the user's settings; throttling that lasts
// Pacing.ThrottleHorizon ends with the domain held open. The wait for the
// pace happens in OnRequest, before Colly's LimitRule, so a waiting domain
// holds none of the slots a shared rule gives every host. Profiles can also
// set an adaptive request timeout: a domain whose pages took 50 ms does not
// hold a slot for the client's full timeout when it starts hanging, and a
// domain with none of its own borrows the fleet's.
//
// # Seeing degradation coming
//
// Each domain's tracker (the rolling record behind Stats) also watches for
// what comes before errors: slow calls (Profile.SlowCall), a latency slope
// against the domain's baseline (Profile.SlopeMultiple: a degrading event,
// and optionally an early trip), and repeated trips, whose cooldown grows
// with full jitter (Profile.MaxCooldown). A FleetGuard judges all domains
// together: when most of them trip at once on connection failures while
// none succeeds, the client is suspect (our proxy, network or resolver),
// every domain is paused together, and the run ends as an error rather than
// a trip.
//
// # Broad crawls
//
// A crawl over a million domains, a few pages each, must not keep a
// million full states. A domain left alone for the idle TTL (Config.IdleTTL,
// default 5 minutes) whose circuit is closed with nothing to remember (no
// failure in its window, no pause, nothing in flight) is compacted into a
// record of about 40 bytes holding what its decisions depend on, and made
// whole again on its next request: 100–130 bytes per idle domain in all,
// map included, against 3.7 KB kept whole before (BenchmarkIdleDomainBytes). Open, half-open
// and paused domains and their trip history are never compacted. The
// unfinished list keeps a sample of URLs (DefaultUnfinishedSample) and
// counts the rest per domain, and Overview sums every domain without listing
// them, for a metrics scrape.
//
// The circuit's state machine is plain Go that takes the caller's clock,
// apart from the Colly wiring (Register). A Store decides where circuits live:
// in-process by default, or shared between workers (storage/redis).
package breaker
