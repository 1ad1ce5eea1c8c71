package redis

import "github.com/breakwater-crawl/breakwater/internal/collyx"

// The queue under CollyStorage, its jobs and lanes, and a few inspection
// helpers are unexported: the package's users reach them through
// CollyStorage (Stats, DeadLetters). The tests drive them directly, under
// the names they had.

type (
	Queue            = jobQueue
	Job              = queueJob
	Lane             = lane
	EmptyError       = emptyError
	UnavailableError = unavailableError
	Checkpoint       = checkpointStore
)

const (
	Normal   = laneNormal
	Critical = laneCritical
	Bulk     = laneBulk
)

var (
	NewQueue  = newQueue
	RequestID = collyx.VisitID
	WithAging = withAging
	WithRand  = withRand
)

// Queue returns the queue under the storage.
func (cs *CollyStorage) Queue() *Queue { return cs.q }

// Keys returns the storage's Redis keys.
func (cs *CollyStorage) Keys() []string { return cs.allKeys() }

// Holds reports whether this process holds the job of the request id
// (claimed, not yet reported).
func (cs *CollyStorage) Holds(id uint64) bool {
	_, ok := cs.held.Load(idKey(id))
	return ok
}

// Lost is the storage's verdict on the crawl's state, without a round trip.
func (cs *CollyStorage) Lost() error { return cs.lost() }

// Keys returns the Redis keys of domain's circuit.
func (bs *BreakerStore) Keys(domain string) []string { return bs.domainKeys(domain) }

var (
	ErrEmpty      = errEmpty
	ErrNotClaimed = errNotClaimed
)

const (
	DefaultCriticalLead = defaultCriticalLead
	DefaultAgingBound   = defaultAgingBound
)
