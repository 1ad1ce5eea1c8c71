// Package circuit is Breakwater's circuit breaker with no crawler in it:
// one small three-state machine per key, its settings, the profiles that
// carry them (with the early warnings' fields, and their validation), the
// store that makes circuits, and the in-process circuit.
//
// A key is whatever fails as a unit: a domain for package breaker (the
// Colly extension), a proxy tomorrow. A caller asks Allow before each
// request and gives the ticket back to Record with the request's Result;
// a Class says whether the result counts, and whether against the key.
// Failures reaching Settings.FailureThreshold's share of a full window trip
// the circuit (a failing site receives at most Settings.FailuresToTrip
// requests); it refuses until the cooldown has passed, then lets
// HalfOpenProbes probes through, which close it again or re-open it.
//
// Every method takes the caller's clock (package clock), so tests drive
// time by hand and nothing sleeps. MemoryStore keeps circuits in this
// process; storage/redis shares them between the workers of a crawl.
// Package circuittest is the table of behaviour every Circuit must pass.
//
// The package imports neither Colly nor a logger.
package circuit
