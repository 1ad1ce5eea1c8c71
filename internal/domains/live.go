package domains

import (
	"hash/maphash"
	"sync"
)

// liveShards is how many maps the domains kept whole are spread over:
// enough that the workers of a broad crawl seldom meet on one lock.
const liveShards = 64

// liveMap holds the domains kept whole, by name: a plain map a shard,
// each behind its own lock. A sync.Map costs about 126 bytes an entry (a
// node with two interfaces, and the trie's indirect nodes); a shard's map
// about 40. Reads mostly never get here: hot.go answers them first.
type liveMap struct {
	seed   maphash.Seed
	shards [liveShards]liveShard
}

type liveShard struct {
	mu   sync.RWMutex
	m    map[string]*Domain
	peak int      // the most m held since it was made: a Go map never gives back its room
	_    [24]byte // a shard a cache line: a lock taken does not slow its neighbour's
}

func (l *liveMap) init() {
	l.seed = maphash.MakeSeed()
	for i := range l.shards {
		l.shards[i].m = map[string]*Domain{}
	}
}

func (l *liveMap) shard(name string) *liveShard {
	return &l.shards[maphash.String(l.seed, name)%liveShards]
}

// Load returns name's domain, if kept whole.
func (l *liveMap) Load(name string) (*Domain, bool) {
	s := l.shard(name)
	s.mu.RLock()
	d, ok := s.m[name]
	s.mu.RUnlock()
	return d, ok
}

// Store makes d name's domain.
func (l *liveMap) Store(name string, d *Domain) {
	s := l.shard(name)
	s.mu.Lock()
	s.m[name] = d
	s.peak = max(s.peak, len(s.m))
	s.mu.Unlock()
}

// CompareAndDelete deletes name's domain if it is d.
func (l *liveMap) CompareAndDelete(name string, d *Domain) bool {
	s := l.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[name] != d {
		return false
	}
	delete(s.m, name)
	return true
}

// Range yields every domain kept whole, a shard at a time, copied out of
// its map first: yield may store, delete and look up (a sweep compacts
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
			m := make(map[string]*Domain, len(s.m))
			for k, d := range s.m {
				m[k] = d
			}
			s.m, s.peak = m, len(m)
		}
		s.mu.Unlock()
	}
}
