package breaker

import (
	"sync"

	"github.com/gocolly/colly/v2"
)

// attemptTable holds each request's attempt between the gate and its
// outcome (a plain map under a lock: a sync.Map's new keys cost more). The
// transport finds it by its header map, which both requests share.
type attemptTable struct {
	mu       sync.Mutex
	m        map[*colly.Request]*attempt
	byHeader map[headerKey]*attempt
}

func (t *attemptTable) store(r *colly.Request, a *attempt) {
	t.mu.Lock()
	if t.m == nil {
		t.m = make(map[*colly.Request]*attempt)
		t.byHeader = make(map[headerKey]*attempt)
	}
	t.m[r] = a
	if a.header != (headerKey{}) {
		t.byHeader[a.header] = a
	}
	t.mu.Unlock()
}

// loadHeader returns the record of the request whose header map is h.
func (t *attemptTable) loadHeader(h headerKey) *attempt {
	if h == (headerKey{}) {
		return nil
	}
	t.mu.Lock()
	a := t.byHeader[h]
	t.mu.Unlock()
	return a
}

func (t *attemptTable) load(r *colly.Request) *attempt {
	t.mu.Lock()
	a := t.m[r]
	t.mu.Unlock()
	return a
}

// take removes r's record and returns it, nil if it has none.
func (t *attemptTable) take(r *colly.Request) *attempt {
	t.mu.Lock()
	a, ok := t.m[r]
	if ok {
		delete(t.m, r)
		if a.header != (headerKey{}) && t.byHeader[a.header] == a {
			delete(t.byHeader, a.header)
		}
	}
	t.mu.Unlock()
	return a
}
