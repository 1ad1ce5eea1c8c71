package breaker

import (
	"sync"
	"sync/atomic"

	"github.com/breakwater-crawl/breakwater/internal/packmap"
)

// urlMap is a sync.Map keyed by URL that counts its keys, so Empty is
// cheap.
type urlMap struct {
	m sync.Map
	n atomic.Int64
}

// Len is how many URLs the set holds.
func (s *urlMap) Len() int64 { return s.n.Load() }

// Empty reports whether the set holds no URL.
func (s *urlMap) Empty() bool { return s.n.Load() == 0 }

// Store sets u's value.
func (s *urlMap) Store(u string, v any) {
	if _, loaded := s.m.Swap(u, v); !loaded {
		s.n.Add(1)
	}
}

// Load returns u's value.
func (s *urlMap) Load(u string) (any, bool) { return s.m.Load(u) }

// LoadOrStore returns u's value, storing v first if it has none.
func (s *urlMap) LoadOrStore(u string, v any) any {
	actual, loaded := s.m.LoadOrStore(u, v)
	if !loaded {
		s.n.Add(1)
	}
	return actual
}

// Delete removes u.
func (s *urlMap) Delete(u string) {
	if _, loaded := s.m.LoadAndDelete(u); loaded {
		s.n.Add(-1)
	}
}

// RangeValues calls f for every value until f returns false.
func (s *urlMap) RangeValues(f func(v any) bool) {
	s.m.Range(func(_, v any) bool { return f(v) })
}

// recentURLsSize is a recentURLs set's generation size (packmap.Recent's
// Size).
const recentURLsSize = 4096

// recentURLs is a set of the URLs added last, safe for concurrent use.
type recentURLs struct {
	some atomic.Bool // a URL was added: until then every call returns at once
	mu   sync.RWMutex
	urls packmap.Recent[struct{}]
}

// Add adds u.
func (s *recentURLs) Add(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.urls.Size == 0 {
		s.urls = packmap.NewRecent[struct{}](recentURLsSize)
	}
	s.urls.Put(u, struct{}{})
	s.some.Store(true)
}

// Remove forgets u.
func (s *recentURLs) Remove(u string) {
	if !s.Has(u) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.urls.Delete(u)
}

// Untouched reports whether no URL was ever added: Has is then false and
// Remove does nothing for every URL.
func (s *recentURLs) Untouched() bool { return !s.some.Load() }

// Has reports whether u is in the set.
func (s *recentURLs) Has(u string) bool {
	if !s.some.Load() {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.urls.Has(u)
}
