package packmap

import (
	"sync"
	"sync/atomic"
)

// URLMap is a sync.Map keyed by URL that counts its keys, so Empty is
// cheap.
type URLMap struct {
	m sync.Map
	n atomic.Int64
}

// Len is how many URLs the set holds.
func (s *URLMap) Len() int64 { return s.n.Load() }

// Empty reports whether the set holds no URL.
func (s *URLMap) Empty() bool { return s.n.Load() == 0 }

// Store sets u's value.
func (s *URLMap) Store(u string, v any) {
	if _, loaded := s.m.Swap(u, v); !loaded {
		s.n.Add(1)
	}
}

// Load returns u's value.
func (s *URLMap) Load(u string) (any, bool) { return s.m.Load(u) }

// LoadOrStore returns u's value, storing v first if it has none.
func (s *URLMap) LoadOrStore(u string, v any) any {
	actual, loaded := s.m.LoadOrStore(u, v)
	if !loaded {
		s.n.Add(1)
	}
	return actual
}

// Delete removes u.
func (s *URLMap) Delete(u string) {
	if _, loaded := s.m.LoadAndDelete(u); loaded {
		s.n.Add(-1)
	}
}

// RangeValues calls f for every value until f returns false.
func (s *URLMap) RangeValues(f func(v any) bool) {
	s.m.Range(func(_, v any) bool { return f(v) })
}

// RecentURLsSize is a RecentURLs set's generation size (Recent's
// Size).
const RecentURLsSize = 4096

// RecentURLs is a set of the URLs added last, safe for concurrent use.
type RecentURLs struct {
	some atomic.Bool // a URL was added: until then every call returns at once
	mu   sync.RWMutex
	urls Recent[struct{}]
}

// Add adds u.
func (s *RecentURLs) Add(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.urls.Size == 0 {
		s.urls = NewRecent[struct{}](RecentURLsSize)
	}
	s.urls.Put(u, struct{}{})
	s.some.Store(true)
}

// Remove forgets u.
func (s *RecentURLs) Remove(u string) {
	if !s.Has(u) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.urls.Delete(u)
}

// Untouched reports whether no URL was ever added: Has is then false and
// Remove does nothing for every URL.
func (s *RecentURLs) Untouched() bool { return !s.some.Load() }

// Has reports whether u is in the set.
func (s *RecentURLs) Has(u string) bool {
	if !s.some.Load() {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.urls.Has(u)
}
