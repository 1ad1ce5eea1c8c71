package validate

import (
	"runtime"
	"sync"
	"weak"

	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/gocolly/colly/v2"
)

// table holds the per-request scoring state, keyed by the *colly.Request.
//
// Colly hands the same *Request to OnResponse, every OnHTML element,
// OnScraped and OnError of one fetch, while the Ctx is shared by a request
// and every child it visits; keying by Ctx would mix a parent's hits with
// its children's. The table never keeps a request alive: the state lives
// as long as anything (Colly, the user's callbacks, a stored *Response)
// can still ask for it, and is dropped once the request is garbage. A page
// must therefore hold no pointer to its request.
//
// An entry is found by the request's address (collyx.RequestAddr) and holds a weak pointer to
// the request, made once when the state is stored: a lookup is a map read
// and a comparison of that pointer's value with the request, without the
// runtime's weak-handle lookup a weak.Make per call would cost. An entry
// whose request is gone (its weak pointer reads nil) answers nothing, is
// replaced by the state of a new request at the same address, and is
// deleted by the next sweep: one every time the table doubles, so the
// sweeps cost a constant per request, and the dead entries never
// outnumber the live ones by much; and one after every garbage
// collection, so a crawl left idle keeps no page per request it made,
// though no request comes to sweep the table.
type table struct {
	once   sync.Once // starts the sweeps after garbage collections
	shards [tableShards]tableShard
}

// tableShards is how many locks the table is split under: requests on
// many goroutines at once (a broad crawl visits from dozens) mostly take
// different ones. A power of two.
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

// gcSentinel is garbage as soon as it is made: its cleanup runs after the
// next garbage collection. (It holds a pointer so that it is never a tiny
// allocation, whose cleanup may never run.)
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

// len returns the number of requests with state.
func (t *table) len() int {
	n := 0
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		sh.sweepLocked()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}
