package breaker

import (
	"sync"
	"sync/atomic"
)

// goneCap is how many URLs that answered 404 or 410 the breaker remembers
// (twice over, in two generations): enough for the retries a user's loop
// makes of them while they are recent, bounded in a broad crawl.
const goneCap = 4096

// goneSet remembers the URLs whose latest answer was a 404 or 410, so that
// a later request for one (a user's retry loop retrying every error) that
// the crawl's end cuts or the circuit refuses is not listed as work left:
// the URL is settled, gone. Bounded: when the current generation fills, it
// becomes the previous one and the oldest is forgotten, and a forgotten
// URL is listed as before (an ending that says work is left, never one
// that hides it).
type goneSet struct {
	some      atomic.Bool // a URL was added: until then every call returns at once
	mu        sync.Mutex
	cur, prev map[string]struct{}
}

func (s *goneSet) add(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		s.cur = make(map[string]struct{})
	}
	if len(s.cur) >= goneCap {
		s.prev, s.cur = s.cur, make(map[string]struct{})
	}
	s.cur[u] = struct{}{}
	s.some.Store(true)
}

// remove forgets u: a later answer was not a 404 or 410.
func (s *goneSet) remove(u string) {
	if !s.some.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cur, u)
	delete(s.prev, u)
}

func (s *goneSet) has(u string) bool {
	if !s.some.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cur[u]; ok {
		return true
	}
	_, ok := s.prev[u]
	return ok
}
