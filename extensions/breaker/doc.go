// Package breaker is Breakwater's per-domain circuit breaker for Colly.
//
// A Breaker keeps one circuit (package circuit) per domain: the URL's
// host, lower-cased, port included. A domain that starts failing (5xx,
// timeouts, refused or reset connections, cut bodies, and 2xx pages the
// validator rejects) receives at most Profile.FailureThreshold ×
// Profile.WindowSize requests, rounded up (10 with Standard), before its
// circuit opens; then its requests are refused locally, listed unfinished
// and handed to the collector's OnError with an error matching ErrOpen,
// while every other domain keeps flowing. After Profile.Cooldown a few
// probes decide whether it closes again. A 429 pauses the domain until its
// Retry-After and sends the URL again; 403 and 404 never trip.
//
//	v, _ := validate.New(validate.Config{Checks: []validate.Check{validate.MinBytes(1024), validate.Require("h1.title")}})
//	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Logger: log})
//	if err != nil { ... } // bad configuration: nothing was sent
//	err = breakwater.Use(c, v, b)
//	c.OnError(breaker.RetryOnError(3)) // 5xx and timeouts only, never a refusal
//
// The bound holds in every wiring Colly offers (synchronous or Async,
// LimitRules, clones, redirects, a cache directory, your own transport): a
// domain never has more requests in flight than its circuit could still
// stop, and requests no callback saw are gated at the transport.
//
// Beside each circuit sit the domain's pace (Pacing: the most in flight,
// the least gap; throttling slows it down, clean successes speed it up),
// an adaptive request timeout, early warnings (slow calls, a latency slope
// against the domain's baseline, a growing cooldown for repeated trips) and
// a FleetGuard that tells a broken client from a broken fleet. Idle domains
// are compacted to about a hundred bytes each, so a crawl can span a
// million of them. Config's Store decides where circuits live: in this
// process by default, or shared between workers (storage/redis).
//
// docs/design.md in the repository says what counts against a site and
// why; docs/pacing.md covers pacing and early warnings.
package breaker
