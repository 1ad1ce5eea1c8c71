package breaker

import (
	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/urlset"
)

// goneSet remembers the URLs whose latest answer was a 404 or 410, so that
// a later request for one (a user's retry loop retrying every error) that
// the crawl's end cuts or the circuit refuses is not listed as work left:
// the URL is settled, gone. Bounded to the URLs gone last (enough for the
// retries of them a user's loop makes while they are recent); a forgotten
// URL is listed as before (an ending that says work is left, never one
// that hides it).
type goneSet struct{ urlset.Recent }

// settled records what an attempt of u came to: a 404 or 410 makes u
// gone; any other answer (a cancelled attempt says nothing) makes it not.
func (s *goneSet) settled(u string, class circuit.Class, cancelled bool) {
	if class == circuit.Gone {
		s.Add(u)
	} else if !cancelled {
		s.Remove(u)
	}
}
