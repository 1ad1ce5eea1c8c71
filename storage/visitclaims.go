package storage

import (
	"net/url"
	"sync"

	"github.com/gocolly/colly/v2"
)

// VisitClaims settles Colly's two-call visited check, IsVisited then
// Visited, for a Colly storage.Storage (the checkpoint's, storage/redis's
// CollyStorage) that two goroutines ask at once about one request ID:
// every caller told the ID is new goes on to Visited, where the first
// wins and every later one gets ErrClaimed. In IsVisited call Join first
// and, when it holds no claim and the store answers "new", Add; in
// Visited call Settle. A claim from HasVisited (IsVisited alone) is never
// settled; its entry stays. The zero value is ready; it is safe for
// concurrent use.
type VisitClaims struct {
	mu sync.Mutex
	m  map[uint64]claim
}

type claim struct {
	n         int  // callers told new that have not called Visited
	contested bool // two callers were told new at the same time
	won       bool // a contested ID's first Visited came
}

// Join is IsVisited meeting id. held is false when no caller holds a
// claim on id: the store decides, and Add records the claim if it answers
// "new". Otherwise IsVisited answers visited: false when the caller
// joined an unsettled claim, true once a contested ID's first Visited
// came.
func (t *VisitClaims) Join(id uint64) (held, visited bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.m[id]
	switch {
	case !ok:
		return false, false
	case c.won:
		return true, true
	}
	c.n++
	c.contested = true
	t.m[id] = c
	return true, false
}

// Add records one more caller told id is new.
func (t *VisitClaims) Add(id uint64) {
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
func (t *VisitClaims) Drop(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.release(id, t.m[id])
}

// Settle is Visited of id. held reports whether a claim was there to
// settle; lost, that another caller's Visited came first: answer
// ErrClaimed.
func (t *VisitClaims) Settle(id uint64) (held, lost bool) {
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
func (t *VisitClaims) release(id uint64, c claim) {
	if c.n--; c.n <= 0 {
		delete(t.m, id)
		return
	}
	t.m[id] = c
}

// ErrClaimed is Visited's answer to a contested ID's later callers
// (VisitClaims.Settle's lost): a colly.AlreadyVisitedError, with an empty
// Destination, to errors.As.
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
