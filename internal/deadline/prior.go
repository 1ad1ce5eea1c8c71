package deadline

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

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
