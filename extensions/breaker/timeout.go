package breaker

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// timeoutFor is the request timeout the breaker's transport applies to d:
// its adaptive timeout, else the fleet's prior, 0 for none.
func (b *Breaker) timeoutFor(d *domain) time.Duration {
	if t := time.Duration(d.timeout.Load()); t > 0 {
		return t
	}
	return b.priorFor(d)
}

// timeoutPrior is what a domain with no adaptive timeout of its own
// borrows: the median of the latest timeouts the crawl's other domains
// earned. A site that hangs from its first request has no successes to
// measure, and would otherwise keep the client's timeout (often 10 s)
// while it holds slots the healthy domains need.
type timeoutPrior struct {
	mu     sync.Mutex
	recent [64]time.Duration // the latest domain timeouts, a ring
	sorted [64]time.Duration // the same, in order: sorted[:n]
	n      int
	next   int
	median atomic.Int64
}

// add puts t in the ring, in place of the oldest once it is full, and
// keeps the sorted copy in step: a step per timeout it moves past, no
// allocation, where sorting a copy of the ring cost an allocation and a
// sort each time (7 % of a closed Allow+Record, whose domain reports a
// new timeout every 100 successes).
func (p *timeoutPrior) add(t time.Duration) {
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

// priorFor is the timeout a domain without its own borrows from the
// fleet, never below its profile's floor; 0 while the fleet has none.
func (b *Breaker) priorFor(d *domain) time.Duration {
	if d.profile.TimeoutMultiple <= 0 {
		return 0
	}
	m := time.Duration(b.prior.median.Load())
	if m <= 0 {
		return 0
	}
	return max(m, d.profile.TimeoutFloor)
}
