// Package coarse is the system clock read at most about once a Tick.
package coarse

import (
	"sync/atomic"
	"time"
)

// Tick is how stale the clock may be.
const Tick = time.Second

// Clock is the system clock read at most about once a Tick, for a hot
// path's timestamps. The zero value is ready.
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

// start reads the clock and schedules a refresh, unless one is.
func (c *Clock) start() int64 {
	n := time.Now().UnixNano()
	c.now.Store(n)
	if c.armed.CompareAndSwap(false, true) {
		time.AfterFunc(Tick, c.tick)
	}
	return n
}

// tick refreshes the value if it was read since, and stops otherwise.
func (c *Clock) tick() {
	if !c.used.Swap(false) {
		c.armed.Store(false)
		return
	}
	c.now.Store(time.Now().UnixNano())
	time.AfterFunc(Tick, c.tick)
}
