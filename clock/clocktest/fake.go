// Package clocktest is a manual clock for tests of time-dependent logic:
// a Fake stands still until the test moves it. Advance and Set fire every
// After that falls due, BlockUntil waits for goroutines to reach their
// wait, and Drive lets time pass only while everything waits.
package clocktest

import (
	"sort"
	"sync"
	"time"
)

// Fake is a manual clock for tests: time stands still until Advance or Set
// moves it, and After channels fire when the clock passes their deadline.
// It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	changed chan struct{} // closed and replaced whenever waiters change
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewFake returns a Fake clock reading t.
func NewFake(t time.Time) *Fake {
	return &Fake{now: t, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// After returns a channel that receives once the clock reaches Now()+d.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.waiters = append(f.waiters, waiter{at: f.now.Add(d), ch: ch})
	f.notify()
	return ch
}

// Advance moves the clock forward by d and fires every After that is due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.setLocked(f.now.Add(d))
	f.mu.Unlock()
}

// Set moves the clock to t (never backwards) and fires every After that is
// due.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	if t.After(f.now) {
		f.setLocked(t)
	}
	f.mu.Unlock()
}

func (f *Fake) setLocked(t time.Time) {
	f.now = t
	sort.Slice(f.waiters, func(i, j int) bool { return f.waiters[i].at.Before(f.waiters[j].at) })
	n := 0
	for _, w := range f.waiters {
		if !w.at.After(t) {
			w.ch <- t
			n++
			continue
		}
		break
	}
	if n > 0 {
		f.waiters = append(f.waiters[:0], f.waiters[n:]...)
		f.notify()
	}
}

func (f *Fake) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Waiters returns how many After channels are waiting to fire.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// BlockUntil waits until at least n After channels are waiting, or the
// timeout (in real time) passes; it reports whether n were reached. Tests use
// it to know every goroutine has reached its wait before advancing.
func (f *Fake) BlockUntil(n int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		f.mu.Lock()
		if len(f.waiters) >= n {
			f.mu.Unlock()
			return true
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

// NextDeadline returns the earliest time an After waits for, if any.
func (f *Fake) NextDeadline() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		return time.Time{}, false
	}
	min := f.waiters[0].at
	for _, w := range f.waiters[1:] {
		if w.at.Before(min) {
			min = w.at
		}
	}
	return min, true
}

// Drive moves the clock to its next deadline whenever something waits on
// it, as if time passed only while everyone sleeps, until stop is closed.
// Run it in its own goroutine while code under test waits on the clock.
func (f *Fake) Drive(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if f.BlockUntil(1, 20*time.Millisecond) {
			if d, ok := f.NextDeadline(); ok {
				f.Set(d)
			}
		}
	}
}
