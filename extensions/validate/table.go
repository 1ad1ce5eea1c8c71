package validate

import (
	"runtime"
	"sync"
	"weak"

	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/gocolly/colly/v2"
)

// table holds the per-request scoring state by *colly.Request address,
// with a weak pointer: it never keeps a request alive (a page holds none).
// Entries of requests gone are swept when a shard doubles and after GCs.
type table struct {
	once   sync.Once // starts the sweeps after garbage collections
	shards [tableShards]tableShard
}

// tableShards is how many locks the table is split under, a power of two.
const tableShards = 64

type tableShard struct {
	mu      sync.Mutex
	m       map[uintptr]slot
	sweepAt int      // the shard's size that triggers its next sweep
	_       [40]byte // a cache line of its own
}

// shard is the shard of the request at address k: a multiplicative hash,
// since allocation leaves the low bits of addresses alike.
func (t *table) shard(k uintptr) *tableShard {
	return &t.shards[(uint64(k)*0x9E3779B97F4A7C15)>>(64-6)]
}

// gcSentinel is garbage at once, so its cleanup runs after the next GC (its
// pointer keeps it from being a tiny allocation, never cleaned up).
type gcSentinel struct{ _ *byte }

// sweepAfterGC sweeps t after the next garbage collection, and again after
// every one after it, for as long as t is in use.
func sweepAfterGC(t weak.Pointer[table]) {
	runtime.AddCleanup(&gcSentinel{}, func(t weak.Pointer[table]) {
		tt := t.Value()
		if tt == nil {
			return // the validator is gone
		}
		for i := range tt.shards {
			sh := &tt.shards[i]
			sh.mu.Lock()
			sh.sweepLocked()
			sh.mu.Unlock()
		}
		sweepAfterGC(t)
	}, t)
}

type slot struct {
	req weak.Pointer[colly.Request]
	p   *page
}

// minSweep is the size below which a shard is never swept.
const minSweep = 1024 / tableShards

// get returns the state of req, or nil.
func (t *table) get(req *colly.Request) *page {
	if req == nil {
		return nil
	}
	k := collyx.RequestAddr(req)
	sh := t.shard(k)
	sh.mu.Lock()
	s, ok := sh.m[k]
	sh.mu.Unlock()
	if !ok || s.req.Value() != req {
		return nil
	}
	return s.p
}

// put stores p for req unless req already has a state, and returns the
// state that is stored.
func (t *table) put(req *colly.Request, p *page) *page {
	t.once.Do(func() { sweepAfterGC(weak.Make(t)) })
	k := collyx.RequestAddr(req)
	sh := t.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if s, ok := sh.m[k]; ok && s.req.Value() == req {
		return s.p
	}
	if sh.m == nil {
		sh.m = make(map[uintptr]slot)
	}
	if len(sh.m) >= max(sh.sweepAt, minSweep) {
		sh.sweepLocked()
		sh.sweepAt = 2 * len(sh.m)
	}
	sh.m[k] = slot{req: weak.Make(req), p: p}
	return p
}

// sweepLocked deletes the shard's entries whose request is gone.
func (sh *tableShard) sweepLocked() {
	for k, s := range sh.m {
		if s.req.Value() == nil {
			delete(sh.m, k)
		}
	}
}
