// Package visitclaim settles Colly's two-call visited check.
//
// Colly asks its storage IsVisited(id) and then calls Visited(id): two
// calls with nothing between them in one goroutine, but two goroutines
// that meet the same new URL at once (two pages linking it, a link and a
// redirect to it) can both be told it is new, and both fetch it. A Table
// counts the callers an ID was told new for and have not called Visited.
// When two were told so at once the ID is contested: the first Visited
// wins, and the storage answers every later one with ErrClaimed, a
// colly.AlreadyVisitedError to errors.As, which stops its request exactly
// as IsVisited would have.
//
// Colly's HasVisited asks IsVisited alone, with no Visited after it. Its
// claim is never settled: it only makes the next caller's claim
// contested, and that caller's Visited is still the first, so the usual
// "if !c.HasVisited(u) { c.Visit(u) }" visits u. The entry stays (a few
// bytes for each URL HasVisited was asked about and that was then
// visited), answering Settled from then on.
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
	// it and is told the ID is new (Visited decides between them).
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

// Join is IsVisited meeting id: if a claim is unsettled the caller joins
// it (Joined: answer "new"); Settled means answer "visited"; Absent means
// the storage must decide, and Add the claim if it answers "new".
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
// there to settle (false: Visited was called alone, as Colly does for a
// redirect hop it did not check); lost, that another caller's Visited of
// the contested ID came first: answer ErrClaimed.
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
// contested ID came second. errors.As finds a colly.AlreadyVisitedError
// in it, with an empty Destination: Visited is given only the request's
// ID.
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
