package domains

import (
	"hash/maphash"
	"sync"
)

// liveShards is how many maps the domains kept whole are spread over:
// enough that the workers of a broad crawl seldom meet on one lock.
const liveShards = 64

// liveMap holds the domains kept whole, by name: a plain map a shard,
// each behind its own lock, keyed by a 64-bit hash of the name (the
// domain holds its name; a map slot of 16 bytes, not a string key's 24).
// A sync.Map costs about 126 bytes an entry (a node with two interfaces,
// and the trie's indirect nodes); a shard's map about 30. Reads mostly
// never get here: hot.go answers them first.
type liveMap struct {
	seed   maphash.Seed
	hashOf func(string) uint64 // tests: a hash of their own, to make names collide
	shards [liveShards]liveShard
}

type liveShard struct {
	mu sync.RWMutex
	m  map[uint64]*Domain // by hash of the name; the domain's Name tells who holds the slot
	// over holds, by name, the domains whose hash a domain in m has
	// (rare: one in 2⁶⁴ for any two names), so that none is lost.
	over map[string]*Domain
	peak int      // the most m held since it was made: a Go map never gives back its room
	_    [16]byte // a shard a cache line: a lock taken does not slow its neighbour's
}

func (l *liveMap) init() {
	l.seed = maphash.MakeSeed()
	for i := range l.shards {
		l.shards[i].m = map[uint64]*Domain{}
	}
}

// shard returns name's shard and its key there.
func (l *liveMap) shard(name string) (*liveShard, uint64) {
	var h uint64
	if l.hashOf != nil {
		h = l.hashOf(name)
	} else {
		h = maphash.String(l.seed, name)
	}
	return &l.shards[h%liveShards], h
}

// loadLocked returns name's domain, if kept whole; s.mu is held.
func (s *liveShard) loadLocked(name string, h uint64) (*Domain, bool) {
	if d, ok := s.m[h]; ok && d.Name == name {
		return d, true
	}
	if s.over == nil {
		return nil, false
	}
	d, ok := s.over[name]
	return d, ok
}

// Load returns name's domain, if kept whole.
func (l *liveMap) Load(name string) (*Domain, bool) {
	s, h := l.shard(name)
	s.mu.RLock()
	d, ok := s.loadLocked(name, h)
	s.mu.RUnlock()
	return d, ok
}

// Store makes d name's domain.
func (l *liveMap) Store(name string, d *Domain) {
	s, h := l.shard(name)
	s.mu.Lock()
	if in, taken := s.m[h]; !taken || in.Name == name {
		s.m[h] = d
		delete(s.over, name) // a no-op on a nil map
	} else {
		if s.over == nil {
			s.over = map[string]*Domain{}
		}
		s.over[name] = d
	}
	s.peak = max(s.peak, len(s.m))
	s.mu.Unlock()
}

// CompareAndDelete deletes name's domain if it is d.
func (l *liveMap) CompareAndDelete(name string, d *Domain) bool {
	s, h := l.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.m[h] == d:
		delete(s.m, h)
	case s.over != nil && s.over[name] == d:
		delete(s.over, name)
	default:
		return false
	}
	return true
}

// Range yields every domain kept whole, a shard at a time, copied out of
// its maps first: yield may store, delete and look up (a sweep compacts
// what it is given), as under sync.Map.Range. A domain stored meanwhile
// may or may not be seen; none is seen twice.
func (l *liveMap) Range(yield func(*Domain) bool) {
	var buf []*Domain
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.RLock()
		buf = buf[:0]
		for _, d := range s.m {
			buf = append(buf, d)
		}
		for _, d := range s.over {
			buf = append(buf, d)
		}
		s.mu.RUnlock()
		for _, d := range buf {
			if !yield(d) {
				return
			}
		}
	}
}

// Shrink moves each shard that holds under a quarter of its peak into a
// map its size, so that the room of the domains a sweep compacted is
// given back.
func (l *liveMap) Shrink() {
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		if len(s.m) < s.peak/4 {
			m := make(map[uint64]*Domain, len(s.m))
			for k, d := range s.m {
				m[k] = d
			}
			s.m, s.peak = m, len(m)
		}
		if s.over != nil && len(s.over) == 0 {
			s.over = nil
		}
		s.mu.Unlock()
	}
}
