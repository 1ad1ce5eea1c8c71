// Package visitclaim settles Colly's two-call visited check, IsVisited
// then Visited, for two goroutines told at once that a URL is new: the
// first Visited wins and every later one gets ErrClaimed. A claim from
// HasVisited (IsVisited alone) is never settled; its entry stays.
package visitclaim

import (
	"net/url"
	"sync"

	"github.com/gocolly/colly/v2"
)

// State is what a Table knows of an ID.
type State int

const (
	// Absent: no caller holds a claim; the storage decides.
	Absent State = iota
	// Joined: the caller joined an unsettled claim: answer "new".
	Joined
	// Settled: a contested ID's first Visited came: answer "visited".
	Settled
)

// Table is the claims of one storage. The zero value is ready; it is safe
// for concurrent use.
type Table struct {
	mu sync.Mutex
	m  map[uint64]claim
}

type claim struct {
	n         int  // callers told new that have not called Visited
	contested bool // two callers were told new at the same time
	won       bool // a contested ID's first Visited came
}

// Join is IsVisited meeting id. On Absent the storage decides, and Adds
// the claim if it answers "new".
func (t *Table) Join(id uint64) State {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.m[id]
	switch {
	case !ok:
		return Absent
	case c.won:
		return Settled
	}
	c.n++
	c.contested = true
	t.m[id] = c
	return Joined
}

// Add records one more caller told id is new.
func (t *Table) Add(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[uint64]claim{}
	}
	c := t.m[id]
	c.n++
	c.contested = c.contested || c.n > 1
	t.m[id] = c
}

// Drop takes back a claim Add recorded.
func (t *Table) Drop(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.release(id, t.m[id])
}

// Settle is Visited of id. held reports whether a claim was there to
// settle; lost, that another caller's Visited came first: answer
// ErrClaimed.
func (t *Table) Settle(id uint64) (held, lost bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.m[id]
	if !ok {
		return false, false
	}
	lost = c.won
	c.won = c.won || c.contested
	t.release(id, c)
	return true, lost
}

// release counts one caller out of c, the claim of id.
func (t *Table) release(id uint64, c claim) {
	if c.n--; c.n <= 0 {
		delete(t.m, id)
		return
	}
	t.m[id] = c
}

// Len returns the number of IDs with a claim.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// ErrClaimed is Visited's answer to a contested ID's later callers: a
// colly.AlreadyVisitedError, with an empty Destination, to errors.As.
var ErrClaimed error = claimedError{}

type claimedError struct{}

func (claimedError) Error() string {
	return "already visited: another goroutine requested the same URL a moment before"
}

func (claimedError) As(target any) bool {
	if p, ok := target.(**colly.AlreadyVisitedError); ok {
		*p = &colly.AlreadyVisitedError{Destination: &url.URL{}}
		return true
	}
	return false
}
