// Package deadline cuts requests that outlive their adaptive timeout, with
// one timer per transport instead of one per request.
package deadline

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Ctx is the context a request travels with. It is done when the watch
// cuts it (a *TimeoutError is its cause) or when its parent is done.
type Ctx struct {
	parent context.Context
	crawl  context.Context // nil: it listens to its parent directly
	w      *Watch
	key    any           // what TimeoutOf is asked about
	name   string        // the domain, for the TimeoutError
	start  time.Time     // real time, as the cut is
	after  time.Duration // the timeout it is cut at; 0 while its domain has none (watched)
	every  time.Duration // watched: how often it looks again for a timeout
	pdl    time.Time     // the parent's deadline, zero for none

	// Under w.mu.
	at time.Time // when the watch looks at it next
	i  int       // its place in w's heap, -1 out of it (cut or released)

	done       chan struct{}
	stopParent func() bool // the parent's AfterFunc, when the crawl is not known

	mu    sync.Mutex
	err   error
	cause error     // what cut it: a *TimeoutError, or the parent's cause
	first func()    // the first AfterFunc callback (the transport's own context)
	more  []*func() // any others
	body  cutBody   // the answer's body, released on Close
}

func (c *Ctx) Deadline() (time.Time, bool) {
	if c.after <= 0 {
		return c.parent.Deadline()
	}
	return c.capped(c.start.Add(c.after)), true
}

// capped is t, or the parent's deadline if that is earlier.
func (c *Ctx) capped(t time.Time) time.Time {
	if !c.pdl.IsZero() && c.pdl.Before(t) {
		return c.pdl
	}
	return t
}

func (c *Ctx) Done() <-chan struct{} { return c.done }

func (c *Ctx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Ctx) Value(key any) any { return c.parent.Value(key) }

// AfterFunc lets the context package register a context derived from c
// with c, not with a goroutine watching c.Done.
func (c *Ctx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	if c.first == nil && len(c.more) == 0 {
		c.first = f
		c.mu.Unlock()
		return c.stopFirst
	}
	p := &f
	c.more = append(c.more, p)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.more, p)
		if i >= 0 {
			c.more = slices.Delete(c.more, i, i+1)
		}
		return i >= 0
	}
}

func (c *Ctx) stopFirst() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	had := c.first != nil
	c.first = nil
	return had
}

// cut ends c with err and cause, once. The callbacks run on this
// goroutine: the context package's cancel funcs neither block nor lock c.
func (c *Ctx) cut(err, cause error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err, c.cause = err, cause
	first, more := c.first, c.more
	c.first, c.more = nil, nil
	close(c.done)
	c.mu.Unlock()
	if first != nil {
		first()
	}
	for _, f := range more {
		(*f)()
	}
}

// TimedOut returns the *TimeoutError that cut c, nil if none did.
func (c *Ctx) TimedOut() *TimeoutError {
	c.mu.Lock()
	defer c.mu.Unlock()
	te, _ := c.cause.(*TimeoutError)
	return te
}

// cutParent ends c with its parent's error (or DeadlineExceeded) and cause.
func (c *Ctx) cutParent() {
	err := cmp.Or(c.parent.Err(), context.DeadlineExceeded)
	c.cut(err, cmp.Or(context.Cause(c.parent), err))
}

// Body wraps rc, the answer's body: a read cut by the timeout reports the
// *TimeoutError, and Close releases the request from the watch.
func (c *Ctx) Body(rc io.ReadCloser) io.ReadCloser {
	c.body.ReadCloser = rc
	return &c.body
}

type cutBody struct {
	io.ReadCloser
	c *Ctx
}

func (b *cutBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		if te := b.c.TimedOut(); te != nil {
			return n, te
		}
	}
	return n, err
}

func (b *cutBody) Close() error {
	err := b.ReadCloser.Close()
	b.c.w.Release(b.c)
	return err
}

// Watch is a transport's watch over its requests in flight: a heap by
// when each is due, and one timer, only ever moved earlier.
type Watch struct {
	// TimeoutOf is the timeout of key's domain now, 0 for none.
	TimeoutOf func(key any) time.Duration

	mu     sync.Mutex
	h      cutHeap
	timer  *time.Timer
	next   time.Time // when the timer fires; zero when it is not set
	crawls map[context.Context]struct{}
}

// Start returns the context a request to the domain name (key for
// TimeoutOf) travels with, cut after the timeout (0: asking TimeoutOf
// every every). crawl is the collector's context, or nil when unknown.
func (w *Watch) Start(parent, crawl context.Context, key any, name string, after, every time.Duration) *Ctx {
	c := &Ctx{parent: parent, w: w, key: key, name: name, start: time.Now(), after: after, every: every, done: make(chan struct{}), i: -1}
	c.body.c = c
	if pdl, ok := parent.Deadline(); ok {
		c.pdl = pdl
	}
	c.at = c.capped(c.start.Add(every))
	if after > 0 {
		c.at = c.capped(c.start.Add(after))
	}
	if crawl == nil {
		c.stopParent = context.AfterFunc(parent, c.cutParent)
	} else if crawl.Done() == nil {
		crawl = nil // it never ends
	}
	c.crawl = crawl
	w.mu.Lock()
	heap.Push(&w.h, c)
	w.armLocked()
	heard := crawl == nil || w.heardLocked(crawl)
	w.mu.Unlock()
	if !heard {
		w.hear(crawl)
	}
	// The crawl may have ended before c was in the heap to be found.
	if parent.Err() != nil {
		c.cutParent()
	}
	return c
}

// Release takes c out of the watch: its request is over.
func (w *Watch) Release(c *Ctx) {
	w.mu.Lock()
	if c.i >= 0 {
		heap.Remove(&w.h, c.i)
	}
	w.mu.Unlock()
	if c.stopParent != nil {
		c.stopParent()
	}
}

// heardLocked reports whether the watch listens to crawl, and marks it so.
func (w *Watch) heardLocked(crawl context.Context) bool {
	if _, ok := w.crawls[crawl]; ok {
		return true
	}
	if w.crawls == nil {
		w.crawls = make(map[context.Context]struct{})
	}
	w.crawls[crawl] = struct{}{}
	return false
}

// hear has the watch cut every request whose parent ended when crawl ends.
func (w *Watch) hear(crawl context.Context) {
	context.AfterFunc(crawl, func() {
		w.mu.Lock()
		delete(w.crawls, crawl)
		// A request's own context, a descendant of the crawl's, may not
		// show the end yet: children are cancelled one by one.
		var ended []*Ctx
		for _, c := range w.h {
			if c.crawl == crawl || c.parent.Err() != nil {
				ended = append(ended, c)
			}
		}
		for _, c := range ended {
			heap.Remove(&w.h, c.i)
		}
		w.mu.Unlock()
		cause := context.Cause(crawl)
		for _, c := range ended {
			if c.crawl == crawl {
				c.cut(crawl.Err(), cause)
			} else {
				c.cutParent()
			}
		}
	})
}

// armLocked sets the timer for the earliest request, unless set earlier.
func (w *Watch) armLocked() {
	if len(w.h) == 0 {
		return
	}
	at := w.h[0].at
	if !w.next.IsZero() && !at.Before(w.next) {
		return
	}
	w.next = at
	if w.timer == nil {
		w.timer = time.AfterFunc(time.Until(at), w.fire)
	} else {
		w.timer.Reset(time.Until(at))
	}
}

// fire cuts the requests due and sets when the watch looks at the others.
func (w *Watch) fire() {
	now := time.Now()
	type cutting struct {
		c  *Ctx
		te *TimeoutError // nil: ended with its parent
	}
	var cuts []cutting
	w.mu.Lock()
	w.next = time.Time{}
	for len(w.h) > 0 && !w.h[0].at.After(now) {
		c := heap.Pop(&w.h).(*Ctx)
		after := c.after
		if after <= 0 {
			after = w.TimeoutOf(c.key)
		}
		var dl time.Time // zero: no timeout yet
		if after > 0 {
			dl = c.start.Add(after)
		}
		k := cutting{c: c}
		switch {
		case c.parent.Err() != nil: // ended with its parent
		case !dl.IsZero() && !now.Before(dl) && (c.pdl.IsZero() || !c.pdl.Before(dl)):
			k.te = &TimeoutError{Domain: c.name, After: after}
		case !c.pdl.IsZero() && !now.Before(c.pdl.Add(parentGrace)):
			// A parent that never says it ended at its deadline.
		default:
			switch {
			case !c.pdl.IsZero() && !now.Before(c.pdl):
				// Let the parent's own timer end it, with the cause that
				// says whose deadline it was.
				c.at = now.Add(parentPoll)
			case !dl.IsZero():
				c.at = c.capped(dl)
			default:
				c.at = c.capped(now.Add(c.every))
			}
			heap.Push(&w.h, c)
			continue
		}
		cuts = append(cuts, k)
	}
	w.armLocked()
	w.mu.Unlock()
	for _, k := range cuts {
		if k.te != nil {
			k.c.cut(context.DeadlineExceeded, k.te)
		} else {
			k.c.cutParent()
		}
	}
}

// How often, and until when, the watch looks again at a request whose
// parent is past its deadline but not done.
const (
	parentPoll  = time.Millisecond
	parentGrace = 100 * time.Millisecond
)

// cutHeap orders requests by when they are to be looked at.
type cutHeap []*Ctx

func (h cutHeap) Len() int           { return len(h) }
func (h cutHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h cutHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i, h[j].i = i, j
}
func (h *cutHeap) Push(x any) {
	c := x.(*Ctx)
	c.i = len(*h)
	*h = append(*h, c)
}
func (h *cutHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	c.i = -1
	return c
}

// TimeoutError is the error of a request cut by its adaptive timeout.
type TimeoutError struct {
	Domain string
	After  time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("breaker: request to %s cut after %v, its adaptive timeout (a multiple of its usual latency)", e.Domain, e.After)
}

// Is makes errors.Is(err, context.DeadlineExceeded) true.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// Prior is what a domain with no adaptive timeout of its own borrows: the
// median of the latest timeouts other domains earned. The zero value is
// ready.
type Prior struct {
	mu     sync.Mutex
	recent [64]time.Duration // the latest domain timeouts, a ring
	sorted [64]time.Duration // the same, in order: sorted[:n]
	n      int
	next   int
	median atomic.Int64
}

// Add puts t in place of the oldest, keeping the sorted copy in step.
func (p *Prior) Add(t time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sorted[:p.n]
	if p.n == len(p.recent) {
		i, _ := slices.BinarySearch(s, p.recent[p.next])
		s = slices.Delete(s, i, i+1)
	}
	i, _ := slices.BinarySearch(s, t)
	s = slices.Insert(s, i, t)
	p.n = len(s)
	p.recent[p.next] = t
	p.next = (p.next + 1) % len(p.recent)
	p.median.Store(int64(s[len(s)/2]))
}

// For is the timeout to borrow, at least floor; 0 while none was earned.
func (p *Prior) For(floor time.Duration) time.Duration {
	m := time.Duration(p.median.Load())
	if m <= 0 {
		return 0
	}
	return max(m, floor)
}
