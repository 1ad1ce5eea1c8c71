package validate

import (
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/gocolly/colly/v2"
)

// table holds the per-request scoring state, keyed by the *colly.Request.
//
// Colly hands the same *Request to OnResponse, every OnHTML element,
// OnScraped and OnError of one fetch, while the Ctx is shared by a request
// and every child it visits; keying by Ctx would mix a parent's hits with
// its children's. The key is a weak pointer, so the table never keeps a
// request alive, and a cleanup attached to the request deletes its entry
// once the garbage collector frees it: the state lives exactly as long as
// anything (Colly, the user's callbacks, a stored *Response) can still ask
// for it, and no longer. A page must therefore hold no pointer to its
// request.
type table struct {
	m    sync.Map // weak.Pointer[colly.Request] -> *page
	live atomic.Int64
}

// get returns the state of req, or nil.
func (t *table) get(req *colly.Request) *page {
	if req == nil {
		return nil
	}
	p, ok := t.m.Load(weak.Make(req))
	if !ok {
		return nil
	}
	return p.(*page)
}

// put stores p for req unless req already has a state, and returns the
// state that is stored.
func (t *table) put(req *colly.Request, p *page) *page {
	k := weak.Make(req)
	if old, loaded := t.m.LoadOrStore(k, p); loaded {
		return old.(*page)
	}
	t.live.Add(1)
	runtime.AddCleanup(req, t.drop, k)
	return p
}

func (t *table) drop(k weak.Pointer[colly.Request]) {
	if _, ok := t.m.LoadAndDelete(k); ok {
		t.live.Add(-1)
	}
}

// len returns the number of requests with state.
func (t *table) len() int { return int(t.live.Load()) }
