package checkpoint

import "sync"

// Locking. Every request's goroutine calls the checkpoint several times a
// page, so its path takes no process-wide lock (one queued a broad crawl
// behind itself): its entry is in a sharded map (below); a
// record's read, state change and write are one step under its stripe, one
// of idStripes locks by ID, so that two requests of one URL write in order;
// writes go to the group commit's sharded buffer (commit.go). The held
// records (bmu), announcements (vmu), re-send and redirect URLs (rmu),
// outage memory (omu) have short locks, the first store error none; mu is
// for the frontier, the run, the saved circuits and the outcomes that touch
// them (failures, throttles).
//
// Lock order: mu, one stripe, rmu or omu, bmu, vmu; the sharded maps'
// and the store's locks are innermost, and a cookie shard's lock is taken
// alone. A goroutine holds at most one stripe: release, which writes the
// held records, is called with none held.

// idStripes is how many locks the records are spread over.
const idStripes = 256

type stripe struct {
	sync.Mutex
	_ [56]byte // a stripe to a cache line
}

// idLock is the stripe of record id.
func (cp *Checkpoint) idLock(id uint64) *sync.Mutex { return &cp.ids[idHash(id)>>56].Mutex }

// shardedMap is a map in 64 shards, each under its own lock a cache line
// apart: the per-page path takes no process-wide lock. Used for the live
// entries and the fresh IDs (the write buffer has shards of its own: commit.go).
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
