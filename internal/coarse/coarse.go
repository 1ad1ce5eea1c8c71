// Package coarse is the system clock read at most about once a Tick, for
// timestamps a hot path writes and only coarse questions read.
package coarse

import (
	"sync/atomic"
	"time"
)

// Tick is how stale the clock may be: a fraction of the spans it is
// compared with (the breaker's slope peers are looked at over 30 s).
const Tick = time.Second

// Clock is the system clock read at most about once a Tick, for the
// timestamps the hot path writes and only coarse questions read: in the
// breaker, when a domain's latency slope was last evaluated, which the
// fleet's client-slow check compares with a span of 30 s. Reading the
// clock costs 30–70 ns on some virtual machines, a quarter of a closed
// Allow+Record when it was read on every fourth success. A timer refreshes the value
// while it is being read and stops after a tick in which no one read it;
// the first read after that reads the clock itself. The zero value is
// ready to use.
type Clock struct {
	now   atomic.Int64 // unix nanos at the latest refresh
	used  atomic.Bool  // read since the latest refresh
	armed atomic.Bool  // a refresh is scheduled
}

// Now returns the time, in unix nanos, at most about a Tick old.
func (c *Clock) Now() int64 {
	if !c.used.Load() {
		c.used.Store(true) // once a tick: a store is dearer than a load
	}
	if !c.armed.Load() {
		return c.start()
	}
	return c.now.Load()
}

// start reads the clock and, unless a refresh is already scheduled,
// schedules one.
func (c *Clock) start() int64 {
	n := time.Now().UnixNano()
	c.now.Store(n)
	if c.armed.CompareAndSwap(false, true) {
		time.AfterFunc(Tick, c.tick)
	}
	return n
}

// tick refreshes the value if it was read since the latest refresh, and
// stops refreshing otherwise.
func (c *Clock) tick() {
	if !c.used.Swap(false) {
		c.armed.Store(false)
		return
	}
	c.now.Store(time.Now().UnixNano())
	time.AfterFunc(Tick, c.tick)
}
