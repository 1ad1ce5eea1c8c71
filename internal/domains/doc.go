// Package domains is the breaker without Colly: the set of per-domain
// circuits (package circuit) and the policies composed beside each
// domain, each a type of its own package: its pace (internal/pace), its
// early warnings and adaptive timeout (tracker.go, internal/deadline),
// the hold of a domain that answers only 401/403 (blocked.go), and over
// all of them the fleet guard (fleetguard.go) and idle compaction
// (internal/idle). extensions/breaker wires a Set into a Colly collector
// and documents its API; access.go is what that wiring asks beyond it.
package domains
