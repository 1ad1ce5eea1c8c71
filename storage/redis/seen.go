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
	mu    sync.Mutex
	ring  []bool // len(ring) < size until it has been full once
	next  int    // where the next outcome goes
	held  int    // how many are held, ≤ size
	count int    // failures among them
	size  int
	n     atomic.Int32 // count, for failures
}

func newSeenFailures(size int) *seenFailures { return &seenFailures{size: max(size, 1)} }

// failures is how many failures the ring holds.
func (w *seenFailures) failures() int { return int(w.n.Load()) }

// add records the latest outcome, a failure or not.
func (w *seenFailures) add(failed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == w.size {
		if w.ring[w.next] {
			w.count--
		}
	} else {
		w.held++
	}
	if w.next == len(w.ring) {
		w.ring = append(w.ring, failed)
	} else {
		w.ring[w.next] = failed
	}
	if failed {
		w.count++
	}
	if w.next++; w.next == w.size {
		w.next = 0
	}
	w.n.Store(int32(w.count))
}

// reset empties the ring: the circuit moved.
func (w *seenFailures) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next, w.held, w.count = 0, 0, 0
	w.n.Store(0)
}
