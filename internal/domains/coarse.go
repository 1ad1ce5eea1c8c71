package domains

import (
	"sync/atomic"
	"time"
)

// coarseTick is how stale the coarse clock may be.
const coarseTick = time.Second

// coarseClock is the system clock read at most about once a coarseTick, for a hot
// path's timestamps. The zero value is ready.
type coarseClock struct {
	now   atomic.Int64 // unix nanos at the latest refresh
	used  atomic.Bool  // read since the latest refresh
	armed atomic.Bool  // a refresh is scheduled
}

// Now returns the time, in unix nanos, at most about a coarseTick old.
func (c *coarseClock) Now() int64 {
	if !c.used.Load() {
		c.used.Store(true) // once a tick: a store is dearer than a load
	}
	if !c.armed.Load() {
		return c.start()
	}
	return c.now.Load()
}

// start reads the clock and schedules a refresh, unless one is.
func (c *coarseClock) start() int64 {
	n := time.Now().UnixNano()
	c.now.Store(n)
	if c.armed.CompareAndSwap(false, true) {
		time.AfterFunc(coarseTick, c.tick)
	}
	return n
}

// tick refreshes the value if it was read since, and stops otherwise.
func (c *coarseClock) tick() {
	if !c.used.Swap(false) {
		c.armed.Store(false)
		return
	}
	c.now.Store(time.Now().UnixNano())
	time.AfterFunc(coarseTick, c.tick)
}
