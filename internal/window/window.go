// Package window is the ring of latest outcomes a circuit judges, shared
// by the in-process circuit (package circuit) and the breaker's policies
// that keep their own record of a site. It is generic so that package
// circuit can use it without an import cycle.
package window

// Window is a ring of the latest counted outcomes with a running failure
// count: O(1) to record, at most size outcomes. Its buffer grows as
// outcomes come in, so a domain that answers twice in a broad crawl costs
// two outcomes, not a full window. It is not safe for concurrent use; its
// owner locks.
type Window[T any] struct {
	failure  func(T) bool // whether an outcome is a failure
	Buf      []T          // the ring; len(buf) < size until it has been full once
	seqs     []uint64     // with AddIssued: the order each held outcome's request left in, beside buf
	size     int
	next     int // where the next outcome goes; equals n until the ring is full
	N        int // how many are held, ≤ size
	Failures int
}

// New returns an empty window of at most size outcomes; failure says
// which outcomes are failures.
func New[T any](size int, failure func(T) bool) Window[T] {
	return Window[T]{size: size, failure: failure}
}

// Add records o as the latest outcome.
func (w *Window[T]) Add(o T) {
	if w.N == w.size {
		if w.failure(w.Buf[w.next]) {
			w.Failures--
		}
	} else {
		w.N++
	}
	if w.next == len(w.Buf) {
		w.Buf = append(w.Buf, o)
	} else {
		w.Buf[w.next] = o
	}
	if w.failure(o) {
		w.Failures++
	}
	w.next++
	if w.next == w.size {
		w.next = 0
	}
}

// AddIssued records o, the outcome of the request that left seq-th, as
// the latest outcomes by the order their requests left: the ring is kept
// in that order, a full one makes room by its earliest, and o is dropped
// if it is earlier than all a full window holds. Colly records a page's
// outcome after those of the pages it visited when it runs synchronously;
// the late successes of a chain of pages answered before a site began
// failing must not push its failures out. An outcome in order costs what
// Add does; a late one, a step per later outcome it goes behind. A window
// is filled by Add or by AddIssued, never both.
func (w *Window[T]) AddIssued(o T, seq uint64) {
	if w.N == w.size && seq < w.seqs[w.next] {
		return // earlier than every outcome held
	}
	at := w.next // where Add puts o, before it moves behind later ones
	w.Add(o)
	if at == len(w.seqs) {
		w.seqs = append(w.seqs, seq)
	} else {
		w.seqs[at] = seq
	}
	// Behind every later outcome, never past the oldest.
	oldest := 0
	if w.N == w.size {
		oldest = w.next
	}
	for at != oldest {
		prev := at - 1
		if prev < 0 {
			prev = w.size - 1
		}
		if w.seqs[prev] <= seq {
			break
		}
		w.Buf[at], w.Buf[prev] = w.Buf[prev], w.Buf[at]
		w.seqs[at], w.seqs[prev] = w.seqs[prev], w.seqs[at]
		at = prev
	}
}

// Full reports whether it holds size outcomes.
func (w *Window[T]) Full() bool { return w.N == w.size }

// Reset empties it.
func (w *Window[T]) Reset() {
	w.next, w.N, w.Failures = 0, 0, 0
}

// FailureRate is failures over outcomes held; 0 when empty.
func (w *Window[T]) FailureRate() float64 {
	if w.N == 0 {
		return 0
	}
	return float64(w.Failures) / float64(w.N)
}

// Outcomes returns the held outcomes, oldest first, in a new slice.
func (w *Window[T]) Outcomes() []T {
	out := make([]T, 0, w.N)
	start := w.next - w.N
	if start < 0 {
		start += len(w.Buf)
	}
	for i := 0; i < w.N; i++ {
		out = append(out, w.Buf[(start+i)%len(w.Buf)])
	}
	return out
}
