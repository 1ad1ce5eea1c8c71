package breaker

import (
	"sync"
	"sync/atomic"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/recent"
)

// goneCap is how many URLs that answered 404 or 410 the breaker remembers
// (twice over, in two generations): enough for the retries a user's loop
// makes of them while they are recent, bounded in a broad crawl.
const goneCap = 4096

// goneSet remembers the URLs whose latest answer was a 404 or 410, so that
// a later request for one (a user's retry loop retrying every error) that
// the crawl's end cuts or the circuit refuses is not listed as work left:
// the URL is settled, gone. Bounded to the URLs gone last; a forgotten URL
// is listed as before (an ending that says work is left, never one that
// hides it). Every outcome asks it, so reads share the lock.
type goneSet struct {
	some atomic.Bool // a URL was added: until then every call returns at once
	mu   sync.RWMutex
	urls recent.Map[struct{}]
}

// settled records what an attempt of u came to: a 404 or 410 makes u
// gone; any other answer (a cancelled attempt says nothing) makes it not.
func (s *goneSet) settled(u string, class circuit.Class, cancelled bool) {
	if class == circuit.Gone {
		s.add(u)
	} else if !cancelled {
		s.remove(u)
	}
}

func (s *goneSet) add(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.urls.Size == 0 {
		s.urls = recent.New[struct{}](goneCap)
	}
	s.urls.Put(u, struct{}{})
	s.some.Store(true)
}

// remove forgets u: a later answer was not a 404 or 410.
func (s *goneSet) remove(u string) {
	if !s.has(u) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.urls.Delete(u)
}

func (s *goneSet) has(u string) bool {
	if !s.some.Load() {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.urls.Has(u)
}
