// Package stall measures how long this process was kept from running: a
// timer due every Period counts how late it fires. A request's latency
// includes whatever of that it lived through (a loaded machine, a long
// garbage collection), which is the client's, not the site's.
package stall

import (
	"sync"
	"sync/atomic"
	"time"
)

// Period is how often the timer is due while the clock is in use.
const Period = 10 * time.Millisecond

// idleAfter is how long the timer keeps running with no Mark.
const idleAfter = time.Second

var (
	late    atomic.Int64 // nanoseconds the timer fired late, in all
	used    atomic.Bool  // a Mark since the last tick
	running atomic.Bool
	mu      sync.Mutex
	due     time.Time // when the running timer is due
	idle    time.Duration
)

// Mark returns the clock's reading now, starting it if it is not running.
// A mark is read again with Since.
func Mark() int64 {
	if !used.Load() {
		used.Store(true)
	}
	if !running.Load() {
		start()
	}
	return late.Load()
}

// Since is how long the process was kept from running since mark, to the
// timer's Period.
func Since(mark int64) time.Duration { return time.Duration(late.Load() - mark) }

func start() {
	mu.Lock()
	defer mu.Unlock()
	if running.Load() {
		return
	}
	running.Store(true)
	idle = 0
	due = time.Now().Add(Period)
	time.AfterFunc(Period, tick)
}

func tick() {
	now := time.Now()
	mu.Lock()
	defer mu.Unlock()
	if l := now.Sub(due); l > 0 {
		late.Add(int64(l))
	}
	if used.Swap(false) {
		idle = 0
	} else if idle += Period; idle >= idleAfter {
		running.Store(false)
		return
	}
	due = now.Add(Period)
	time.AfterFunc(Period, tick)
}
