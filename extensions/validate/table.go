package validate

import (
	"runtime"
	"sync"
	"unsafe"
	"weak"

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
// An entry is found by the request's address and holds a weak pointer to
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
	mu      sync.Mutex
	m       map[uintptr]slot
	sweepAt int // the table's size that triggers the next sweep
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
		tt.mu.Lock()
		tt.sweepLocked()
		tt.mu.Unlock()
		sweepAfterGC(t)
	}, t)
}

type slot struct {
	req weak.Pointer[colly.Request]
	p   *page
}

// minSweep is the size below which the table is never swept.
const minSweep = 1024

func addr(req *colly.Request) uintptr { return uintptr(unsafe.Pointer(req)) }

// get returns the state of req, or nil.
func (t *table) get(req *colly.Request) *page {
	if req == nil {
		return nil
	}
	t.mu.Lock()
	s, ok := t.m[addr(req)]
	t.mu.Unlock()
	if !ok || s.req.Value() != req {
		return nil
	}
	return s.p
}

// put stores p for req unless req already has a state, and returns the
// state that is stored.
func (t *table) put(req *colly.Request, p *page) *page {
	k := addr(req)
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.m[k]; ok && s.req.Value() == req {
		return s.p
	}
	if t.m == nil {
		t.m = make(map[uintptr]slot)
		sweepAfterGC(weak.Make(t))
	}
	if len(t.m) >= max(t.sweepAt, minSweep) {
		t.sweepLocked()
		t.sweepAt = 2 * len(t.m)
	}
	t.m[k] = slot{req: weak.Make(req), p: p}
	return p
}

// sweepLocked deletes the entries whose request is gone.
func (t *table) sweepLocked() {
	for k, s := range t.m {
		if s.req.Value() == nil {
			delete(t.m, k)
		}
	}
}

// len returns the number of requests with state.
func (t *table) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked()
	return len(t.m)
}
