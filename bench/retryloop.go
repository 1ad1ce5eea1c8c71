package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

// retryLoop is the retry loop Colly users commonly write, since Colly has
// none of its own (colly#551, #657): on an error, Request.Retry() up to
// Max times, waiting Base, 2×Base, 4×Base, ... before each. The count is
// kept per URL in a map, not in the request's Ctx: Ctx is shared with every
// request a page visits, so a counter there leaks into children and
// siblings.
type retryLoop struct {
	max  int
	base time.Duration
	ctx  context.Context // the run's: a stopped run retries nothing

	mu     sync.Mutex
	tries  map[string]int
	issued atomic.Int64
}

func newRetryLoop(ctx context.Context, max int, base time.Duration) *retryLoop {
	return &retryLoop{max: max, base: base, ctx: ctx, tries: make(map[string]int)}
}

// retry waits the URL's next backoff and sends it again, unless it has
// used up its retries. It sleeps in the calling callback, as such loops
// do: in an async collector that holds a goroutine, not a LimitRule slot
// (Colly releases the slot before OnError runs).
func (l *retryLoop) retry(r *colly.Request) {
	u := r.URL.String()
	l.mu.Lock()
	n := l.tries[u]
	if n >= l.max {
		l.mu.Unlock()
		return
	}
	l.tries[u] = n + 1
	l.mu.Unlock()

	t := time.NewTimer(l.base << n)
	defer t.Stop()
	select {
	case <-t.C:
	case <-l.ctx.Done():
		return
	}
	if l.ctx.Err() != nil {
		return
	}
	l.issued.Add(1)
	_ = r.Retry()
}
