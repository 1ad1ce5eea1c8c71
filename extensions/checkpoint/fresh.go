package checkpoint

import "sync"

// freshTable holds the IDs IsVisited asked the store about and found no
// record of, until their request's first entry is made: that entry need
// not ask the store again (only the request Colly then fetches writes
// the record). Sharded by ID: no process-wide lock. An ID told new whose
// request never came stays until its shard is full, and is then
// forgotten: only a store read is lost.
type freshTable struct {
	shards [freshShards]freshShard
}

const (
	freshShards = 64
	freshMax    = 256 // IDs per shard
)

type freshShard struct {
	mu sync.Mutex
	m  map[uint64]struct{}
	_  [48]byte // a shard to a cache line
}

func (t *freshTable) shard(id uint64) *freshShard {
	return &t.shards[(id*0x9E3779B97F4A7C15)>>58]
}

// add notes that the store has no record of id.
func (t *freshTable) add(id uint64) {
	sh := t.shard(id)
	sh.mu.Lock()
	if sh.m == nil || len(sh.m) >= freshMax {
		sh.m = map[uint64]struct{}{}
	}
	sh.m[id] = struct{}{}
	sh.mu.Unlock()
}

// take reports whether id was noted, and forgets it.
func (t *freshTable) take(id uint64) bool {
	sh := t.shard(id)
	sh.mu.Lock()
	_, ok := sh.m[id]
	delete(sh.m, id)
	sh.mu.Unlock()
	return ok
}
