package checkpoint

import "sync"

// shardedMap is a map in 64 shards, each under its own lock a cache line
// apart: the per-page path takes no process-wide lock. Used for the live
// entries, the fresh IDs and the write buffer (commit.go).
type shardedMap[K comparable, V any] struct {
	hash   func(K) uint64 // its top 6 bits pick the shard
	shards [64]shard[K, V]
}

type shard[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
	_  [48]byte // a shard to a cache line (mutex and map: 16 bytes): no false sharing
}

// idHash spreads record IDs over the shards.
func idHash(id uint64) uint64 { return id * 0x9E3779B97F4A7C15 }

func (t *shardedMap[K, V]) index(k K) uint64 { return t.hash(k) >> 58 }

// lock returns k's shard, locked, with a map.
func (t *shardedMap[K, V]) lock(k K) *shard[K, V] {
	s := &t.shards[t.index(k)]
	s.mu.Lock()
	if s.m == nil {
		s.m = map[K]V{}
	}
	return s
}

func (t *shardedMap[K, V]) get(k K) (V, bool) {
	s := t.lock(k)
	v, ok := s.m[k]
	s.mu.Unlock()
	return v, ok
}

func (t *shardedMap[K, V]) put(k K, v V) {
	s := t.lock(k)
	s.m[k] = v
	s.mu.Unlock()
}

// take deletes k, reporting whether it was there.
func (t *shardedMap[K, V]) take(k K) bool {
	s := t.lock(k)
	_, ok := s.m[k]
	delete(s.m, k)
	s.mu.Unlock()
	return ok
}

// each calls f with every value, a shard's lock held at a time.
func (t *shardedMap[K, V]) each(f func(V)) {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		for _, v := range s.m {
			f(v)
		}
		s.mu.Unlock()
	}
}
