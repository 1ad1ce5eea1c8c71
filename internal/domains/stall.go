package domains

// The stall clock measures how long this process was kept from running: a
// timer due every stallPeriod counts how late it fires. A request's
// latency includes whatever of that it lived through (a loaded machine, a
// long garbage collection), which is the client's, not the site's.

import (
	"sync"
	"sync/atomic"
	"time"
)

// stallPeriod is how often the timer is due while the clock is in use.
const stallPeriod = 10 * time.Millisecond

// stallIdleAfter is how long the timer keeps running with no StallMark.
const stallIdleAfter = time.Second

// The stall clock's state: one clock for the process.
var stall struct {
	late    atomic.Int64 // nanoseconds the timer fired late, in all
	used    atomic.Bool  // a StallMark since the last tick
	running atomic.Bool
	mu      sync.Mutex
	due     time.Time // when the running timer is due
	idle    time.Duration
}

// StallMark returns the stall clock's reading now, starting it if it is
// not running. A mark is read again with StallSince.
func StallMark() int64 {
	if !stall.used.Load() {
		stall.used.Store(true)
	}
	if !stall.running.Load() {
		stallStart()
	}
	return stall.late.Load()
}

// StallSince is how long the process was kept from running since mark, to
// the timer's stallPeriod.
func StallSince(mark int64) time.Duration { return time.Duration(stall.late.Load() - mark) }

// stallStart starts the timer, unless it runs.
func stallStart() {
	stall.mu.Lock()
	defer stall.mu.Unlock()
	if stall.running.Load() {
		return
	}
	stall.running.Store(true)
	stall.idle = 0
	stall.due = time.Now().Add(stallPeriod)
	time.AfterFunc(stallPeriod, stallTick)
}

// stallTick counts how late the timer fired and sets it again while a
// StallMark came within stallIdleAfter.
func stallTick() {
	now := time.Now()
	stall.mu.Lock()
	defer stall.mu.Unlock()
	if l := now.Sub(stall.due); l > 0 {
		stall.late.Add(int64(l))
	}
	if stall.used.Swap(false) {
		stall.idle = 0
	} else if stall.idle += stallPeriod; stall.idle >= stallIdleAfter {
		stall.running.Store(false)
		return
	}
	stall.due = now.Add(stallPeriod)
	time.AfterFunc(stallPeriod, stallTick)
}
