// Package breaker is Breakwater's per-domain circuit breaker for Colly.
//
// A crawl over many sites should notice when one of them degrades, stop
// sending it traffic while the others keep flowing, probe it again after a
// cooldown, and never count its own mistakes against the site. A Breaker
// keeps one three-state circuit per domain (the URL's host, lower-cased,
// port included):
//
//   - Closed lets requests through and records each outcome in a window of
//     the last Profile.WindowSize counted outcomes. A full window whose
//     failure rate is at or above Profile.FailureThreshold trips it; so do
//     Profile.ConsecutiveFailures failures in a row, if set.
//   - Open refuses every request, locally and in well under a microsecond,
//     until Profile.Cooldown has passed.
//   - HalfOpen lets at most Profile.HalfOpenProbes requests be in flight at
//     once. One failed probe re-opens; all passing closes and clears the
//     window.
//
// What counts is DESIGN.md's outcome table (see Classify): timeouts,
// refused or reset connections, 5xx, truncated bodies and DNS failures are
// Degraded, and a 2xx the Validator rejects is Invalid; both count as
// failures. A 429 is Throttled: it pauses the domain until its Retry-After
// and the URL is sent again, but never trips. 403 (Blocked) and 404/410
// (Gone) never trip either; throttled and blocked answers have their own
// counters and a warning event when they keep coming.
//
// # Where the decision is taken
//
// Register wires the breaker into a collector. The gate is OnRequestHeaders,
// which Colly runs after a LimitRule slot is acquired and right before the
// client sends: asked only in OnRequest, every queued request would be
// allowed before the first failure came back, and all of them would go out
// into the outage (measured with gobreaker wired that way: 270 of 270). A
// refused request never reaches the network and is not a failure of the
// site; it is counted and handed to OnRefused hooks with a
// *CircuitOpenError naming the domain and when it may be probed again.
//
// The state machine (circuit.go) is plain Go that takes the caller's clock;
// the Colly wiring is colly.go. A Store decides where circuits live:
// in-process by default, or shared between workers (storage/redis).
package breaker
