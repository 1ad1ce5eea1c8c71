package checkpoint

import (
	"net/url"

	"github.com/gocolly/colly/v2"
)

// Colly asks its storage IsVisited and then calls Visited: two calls, with
// nothing between them in one goroutine, but two goroutines that meet the
// same new URL at once (two pages linking it, a link and a redirect to it)
// can both be told it is new, and both would fetch it. So IsVisited counts
// the callers it is answering for an ID, and an ID two of them were told
// was new at once is contested: the first Visited of it wins, and every
// later one returns a colly.AlreadyVisitedError, which stops its request
// exactly as IsVisited would have (and is excluded from the breaker's
// counts).
//
// HasVisited asks IsVisited alone, with no Visited after it. Its claim is
// never settled; it only makes the next caller's claim contested, and the
// next caller's Visited is still the first.

// claim is what IsVisited and Visited know of one ID.
type claim struct {
	n         int  // callers that asked IsVisited and have not called Visited
	contested bool // two callers were told the ID was new at the same time
	won       bool // a contested ID's first Visited came
}

// errClaimed is Visited's answer to the caller that came second.
var errClaimed error = claimedError{}

// claimedError is a colly.AlreadyVisitedError to errors.As (with an empty
// Destination: Visited is given only the request's ID), with a message
// that says what happened.
type claimedError struct{}

func (claimedError) Error() string {
	return "checkpoint: already visited: another goroutine requested the same URL a moment before"
}

func (claimedError) As(target any) bool {
	if p, ok := target.(**colly.AlreadyVisitedError); ok {
		*p = &colly.AlreadyVisitedError{Destination: &url.URL{}}
		return true
	}
	return false
}

func (cp *Checkpoint) claimLocked(id uint64) {
	c := cp.claims[id]
	c.n++
	if c.n > 1 {
		c.contested = true
	}
	cp.claims[id] = c
}

// unclaimLocked drops a claim IsVisited answered "visited" for.
func (cp *Checkpoint) unclaimLocked(id uint64) {
	c, ok := cp.claims[id]
	if !ok {
		return
	}
	if c.n--; c.n <= 0 {
		delete(cp.claims, id)
		return
	}
	cp.claims[id] = c
}

// settleClaimLocked is Visited of id: it reports whether another caller's
// Visited of the contested id came first.
func (cp *Checkpoint) settleClaimLocked(id uint64) (lost bool) {
	c, ok := cp.claims[id]
	if !ok {
		return false
	}
	lost = c.won
	c.won = c.won || c.contested
	if c.n--; c.n <= 0 {
		delete(cp.claims, id)
	} else {
		cp.claims[id] = c
	}
	return lost
}
