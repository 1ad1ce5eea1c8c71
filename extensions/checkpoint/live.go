package checkpoint

import (
	"hash/maphash"
	"sync"

	"github.com/gocolly/colly/v2"
)

// liveShards is how many locks the live entries are spread over.
const liveShards = 64

// liveTable holds the live entries by request, in shards, so that finding
// a request's entry (or learning it has none, as OnScraped does for every
// page the breaker already reported) takes no process-wide lock. What an
// entry holds is still changed under Checkpoint.mu; the shard's lock
// guards only the map.
type liveTable struct {
	seed   maphash.Seed
	shards [liveShards]liveShard
}

type liveShard struct {
	mu sync.Mutex
	m  map[*colly.Request]*entry
	_  [48]byte // a shard to a cache line (mutex and map: 16 bytes): no false sharing
}

func newLiveTable() *liveTable {
	t := &liveTable{seed: maphash.MakeSeed()}
	for i := range t.shards {
		t.shards[i].m = map[*colly.Request]*entry{}
	}
	return t
}

func (t *liveTable) shard(r *colly.Request) *liveShard {
	return &t.shards[maphash.Comparable(t.seed, r)%liveShards]
}

// get returns r's live entry, if it has one.
func (t *liveTable) get(r *colly.Request) (*entry, bool) {
	s := t.shard(r)
	s.mu.Lock()
	e, ok := s.m[r]
	s.mu.Unlock()
	return e, ok
}

// put makes e r's live entry.
func (t *liveTable) put(r *colly.Request, e *entry) {
	s := t.shard(r)
	s.mu.Lock()
	s.m[r] = e
	s.mu.Unlock()
}

// del lets r's entry go.
func (t *liveTable) del(r *colly.Request) {
	s := t.shard(r)
	s.mu.Lock()
	delete(s.m, r)
	s.mu.Unlock()
}

// each calls f with every live entry, a shard's lock held at a time.
func (t *liveTable) each(f func(*entry)) {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		for _, e := range s.m {
			f(e)
		}
		s.mu.Unlock()
	}
}
