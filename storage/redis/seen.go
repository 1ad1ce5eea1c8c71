package redis

import (
	"sync"
	"sync/atomic"
)

// seenFailures counts the failures among the latest size counted outcomes
// this process recorded in a shared circuit (a ring of failure flags, grown
// as outcomes come in), for WindowFailures: its count reads without the
// lock.
type seenFailures struct {
	mu   sync.Mutex
	ring []bool // the outcomes held, len(ring) ≤ size
	next int    // where the next outcome goes
	size int
	n    atomic.Int32 // failures among them; written under mu
}

func newSeenFailures(size int) *seenFailures { return &seenFailures{size: max(size, 1)} }

// failures is how many failures the ring holds.
func (w *seenFailures) failures() int { return int(w.n.Load()) }

// add records the latest outcome, a failure or not.
func (w *seenFailures) add(failed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var d int32 // one step: a reader never sees a count in between
	if failed {
		d++
	}
	if w.next == len(w.ring) {
		w.ring = append(w.ring, failed)
	} else {
		if w.ring[w.next] {
			d--
		}
		w.ring[w.next] = failed
	}
	w.n.Add(d)
	w.next = (w.next + 1) % w.size
}

// reset empties the ring: the circuit moved.
func (w *seenFailures) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ring, w.next = w.ring[:0], 0
	w.n.Store(0)
}
