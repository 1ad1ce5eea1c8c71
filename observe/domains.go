package observe

import (
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// Domains is a Subject that keeps a circuit per domain (a
// *breaker.Breaker): what a checkpoint saves and restores, and what
// metrics and reports read, beyond the hooks. An Observer asks for it
// with a type assertion on the Subject it is given.
type Domains interface {
	Subject
	// Circuits returns the circuits of the named domains (every domain
	// seen when none is named), sorted by domain. A domain never seen, or
	// whose store cannot be read, is left out.
	Circuits(domains ...string) []DomainCircuit
	// Restore puts back a domain's circuit and pause as a checkpoint
	// saved them. Nothing is counted and no hook is called.
	Restore(DomainCircuit) error
	// Overview returns the totals over every domain and the stats of
	// the k worth a look (see Overview.Top); k ≤ 0 lists none.
	Overview(k int) Overview
	// Stats returns a snapshot of every domain seen, sorted by domain.
	Stats() []DomainStats
}

// DomainCircuit is one domain's circuit as a checkpoint saves it.
type DomainCircuit struct {
	Domain         string
	State          circuit.State
	RetryAt        time.Time // when an open circuit may be probed
	Trips          int       // how many times it has opened
	WindowLen      int       // outcomes held in the window
	WindowFailures int       // failures among them
	ProbesInFlight int
	// HaltUntil is the end of the Retry-After pause the domain is under;
	// zero for none.
	HaltUntil time.Time
	// Unanswered counts the requests to the domain that left and were cut
	// by the crawl's own end (its context cancelled or past its deadline):
	// the site may have received them, and nobody knows what it answered.
	// A checkpoint counts them as failures in the window it restores, as
	// it counts requests in flight when a process was killed.
	Unanswered int
}

// DomainStats is one domain's state and counters.
type DomainStats struct {
	Domain  string        `json:"domain"`
	Profile string        `json:"profile"`
	State   circuit.State `json:"state"`
	RetryAt time.Time     `json:"retry_at,omitzero"`
	Trips   int           `json:"trips"`
	// Outcomes counts every attempt by class, keyed by the class's name
	// (Outcomes[circuit.Success.String()]).
	Outcomes map[string]int64 `json:"outcomes"`
	// Refused counts requests refused without touching the network.
	Refused int64 `json:"refused"`
	// Tracked, SuccessRate and MedianLatency describe the rolling tracker:
	// the latest counted outcomes, successes' median latency.
	Tracked       int           `json:"tracked"`
	SuccessRate   float64       `json:"success_rate"`
	MedianLatency time.Duration `json:"median_latency_ns"`
	// Pace is the domain's current pace, its Retry-After pauses and the
	// time spent paused.
	Pace PaceStats `json:"pace"`
	// Timeout is the adaptive request timeout in force, 0 if none.
	Timeout time.Duration `json:"timeout_ns"`
}

// PaceStats is a domain's pace at a moment.
type PaceStats struct {
	Limit     int           `json:"limit"`         // in-flight cap, 0 = none of Breakwater's
	Gap       time.Duration `json:"gap_ns"`        // least time between request starts
	InFlight  int           `json:"in_flight"`     // requests between the gate and their outcome
	Pauses    int           `json:"pauses"`        // Retry-After halts taken
	PausedFor time.Duration `json:"paused_for_ns"` // time spent halted, in total
	HaltUntil time.Time     `json:"halt_until,omitzero"`
}

// Overview is every domain at a glance: totals over all of them, and the
// full stats of the few worth a look. Unlike Stats, it costs no
// allocation per domain, and none at all per compacted domain, so a
// metrics scrape of a broad crawl can afford it.
type Overview struct {
	// Domains counts every domain the breaker knows, compacted ones
	// included; Compacted those compacted (breaker.Config.IdleTTL).
	Domains   int
	Compacted int
	// States counts the domains in each state (index: Closed, Open,
	// HalfOpen).
	States [3]int
	// Unhealthy counts the domains that are not closed and healthy: open
	// or half-open, failures in the window, a Retry-After pause, a pace
	// slowed down by throttling, or throttled or blocked answers in a row.
	Unhealthy int
	// Outcomes, Refused, Trips and Pauses sum every domain's.
	Outcomes map[string]int64
	Refused  int64
	Trips    int64
	Pauses   int64
	// Top holds at most k domains' stats, sorted by domain: the unhealthy
	// first (open, then half-open, then paused, then the rest), and, if
	// fewer than k are, the busiest healthy ones (most attempts).
	Top []DomainStats
}
