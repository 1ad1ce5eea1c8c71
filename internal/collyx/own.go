package collyx

import (
	"maps"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocolly/colly/v2"
)

// Colly's handleOnRequest runs every OnRequest callback of a request in
// the order they were registered, an aborted request's too, and fetch
// reports nothing to OnError for a request aborted there. A callback that
// stops a request early and runs OnError itself (ReportError) would run
// it before the callbacks registered after it, which plain Colly never
// does: it may do so only when none of those is the program's. Own and
// OnlyOwnAfter tell Breakwater's callbacks from the program's.

// own holds the code of the callbacks Own marked, copied on each write:
// it is read on every early refusal, written once per Register.
var own struct {
	mu   sync.Mutex // serialises writers
	code atomic.Pointer[map[uintptr]struct{}]
}

// Own marks f as one of Breakwater's OnRequest callbacks and returns it.
// A callback is known by its code: every closure of one function literal,
// and every method value of one method, is marked with it. Only
// Breakwater's own callbacks may be marked.
func Own(f colly.RequestCallback) colly.RequestCallback {
	p := codeOf(f)
	own.mu.Lock()
	defer own.mu.Unlock()
	if isOwn(f) {
		return f
	}
	m := map[uintptr]struct{}{p: {}}
	if old := own.code.Load(); old != nil {
		maps.Copy(m, *old)
	}
	own.code.Store(&m)
	return f
}

func codeOf(f colly.RequestCallback) uintptr { return reflect.ValueOf(f).Pointer() }

func isOwn(f colly.RequestCallback) bool {
	m := own.code.Load()
	if m == nil {
		return false
	}
	_, ok := (*m)[codeOf(f)]
	return ok
}

// requestCallbacks returns c's OnRequest callbacks as Colly runs them
// (the slice itself: Colly only appends to it), false when this Colly
// version keeps them elsewhere.
func requestCallbacks(c *colly.Collector) ([]colly.RequestCallback, bool) {
	cbs := at[[]colly.RequestCallback](unsafe.Pointer(c), layout.requestCallbacks)
	if cbs == nil || !layout.lock.ok {
		return nil, false
	}
	if mu := lockOf(unsafe.Pointer(c), layout.lock); mu != nil {
		mu.RLock()
		defer mu.RUnlock()
	}
	return *cbs, true
}

// RequestCallbackCount returns how many OnRequest callbacks c has: the
// place the next one registered takes. It returns -1 when this Colly
// version keeps them elsewhere.
func RequestCallbackCount(c *colly.Collector) int {
	cbs, ok := requestCallbacks(c)
	if !ok {
		return -1
	}
	return len(cbs)
}

// OnlyOwnAfter reports whether every OnRequest callback c runs after its
// i-th (counted from 0, in the order registered) is one Own marked, so
// that a request stopped by the i-th may have its OnError callbacks run
// at once. It reports false when i is not one of c's callbacks or this
// Colly version keeps them elsewhere: the request must then go on through
// the rest of them before its error is reported.
func OnlyOwnAfter(c *colly.Collector, i int) bool {
	cbs, ok := requestCallbacks(c)
	if !ok || i < 0 || i >= len(cbs) {
		return false
	}
	for _, f := range cbs[i+1:] {
		if !isOwn(f) {
			return false
		}
	}
	return true
}
