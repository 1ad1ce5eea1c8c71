package validate

import (
	"runtime"
	"sync"
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
//
// Every request adds a key and, later, its cleanup removes it: a plain map
// under a lock, which costs a sync.Map's new-key store a fraction of it.
type table struct {
	mu sync.Mutex
	m  map[weak.Pointer[colly.Request]]*page
}

// get returns the state of req, or nil.
func (t *table) get(req *colly.Request) *page {
	if req == nil {
		return nil
	}
	k := weak.Make(req)
	t.mu.Lock()
	p := t.m[k]
	t.mu.Unlock()
	return p
}

// put stores p for req unless req already has a state, and returns the
// state that is stored.
func (t *table) put(req *colly.Request, p *page) *page {
	k := weak.Make(req)
	t.mu.Lock()
	if old, ok := t.m[k]; ok {
		t.mu.Unlock()
		return old
	}
	if t.m == nil {
		t.m = make(map[weak.Pointer[colly.Request]]*page)
	}
	t.m[k] = p
	t.mu.Unlock()
	runtime.AddCleanup(req, t.drop, k)
	return p
}

func (t *table) drop(k weak.Pointer[colly.Request]) {
	t.mu.Lock()
	delete(t.m, k)
	t.mu.Unlock()
}

// len returns the number of requests with state.
func (t *table) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
