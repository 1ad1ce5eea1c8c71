package storage

import "strconv"

// State is where a URL stands in a crawl. The zero value is not a valid
// state: a Record must always say where its URL stands.
type State uint8

const (
	// Pending: discovered, not yet attempted (or re-queued on resume).
	Pending State = iota + 1
	// InFlight: handed to the fetcher; not known to have finished. After a
	// crash an InFlight URL is fetched again.
	InFlight
	// Done: fetched and accepted. The only state that counts as visited
	// after a restart.
	Done
	// Failed: the last attempt failed; eligible again after NotBefore while
	// attempts remain.
	Failed
	// Parked: refused without a network call (the domain's breaker was
	// open); eligible again after NotBefore. A parked attempt is not spent.
	Parked
	// Dead: given up on (attempts exhausted, or gone). Never re-driven.
	Dead
)

var stateNames = [...]string{"", "pending", "in-flight", "done", "failed", "parked", "dead"}

// String returns the state's lower-case name, or "State(n)" for an invalid one.
func (s State) String() string {
	if s.Valid() {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Valid reports whether s is one of the six defined states.
func (s State) Valid() bool { return s >= Pending && s <= Dead }

// States returns every valid state, in order. Scanning with all of them is
// the same as scanning with none.
func States() []State { return []State{Pending, InFlight, Done, Failed, Parked, Dead} }
