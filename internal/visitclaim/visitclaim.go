// Package visitclaim settles Colly's two-call visited check: two
// goroutines that meet the same new URL at once can both be told by
// IsVisited that it is new. A Table counts the callers told an ID is new
// that have not called Visited; when two were told so at once, the first
// Visited wins and the storage answers every later one with ErrClaimed,
// which stops its request as IsVisited would have. Colly's HasVisited asks
// IsVisited alone: its claim is never settled, and its entry stays,
// answering Settled once the URL is visited.
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
	// Joined: a caller holds an unsettled claim; the new caller joined
	// it and is told the ID is new.
	Joined
	// Settled: a contested ID's first Visited came; the ID is visited.
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

// Add records one more caller told id is new (or about to be asked; Drop
// takes it back).
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

// Drop takes back a claim Add recorded for a caller that was then told
// the ID is visited.
func (t *Table) Drop(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.release(id, t.m[id])
}

// Settle is Visited of id. held reports whether a caller's claim was
// there to settle (not for a redirect hop Colly did not check); lost, that
// another caller's Visited of the contested ID came first: answer
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

// ErrClaimed is Visited's answer to the caller whose Visited of a
// contested ID came second. It is a colly.AlreadyVisitedError to
// errors.As, with an empty Destination.
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
