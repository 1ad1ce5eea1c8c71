package window

// Ordered is a Window kept in the order its outcomes' requests left:
// synchronous Colly records a page after the pages it visited, and those
// late successes must not push later failures out. An outcome earlier than
// all a full window holds is dropped.
type Ordered[T any] struct {
	// What a record writes comes first, for an owner's cache line.
	next     int // where the next outcome goes; equals N until the ring is full
	N        int // how many are held, ≤ size
	Failures int
	ring     []issued[T] // len(ring) < size until it has been full once
	size     int
	failure  func(T) bool
}

// issued is an outcome and the order its request left in.
type issued[T any] struct {
	o   T
	seq uint64
}

// NewOrdered is New for an Ordered window.
func NewOrdered[T any](size int, failure func(T) bool) Ordered[T] {
	return Ordered[T]{size: size, failure: failure}
}

// Add records o, the outcome of the request that left seq-th.
func (w *Ordered[T]) Add(o T, seq uint64) {
	at := w.next // where o goes before it moves behind later outcomes
	if w.N == w.size {
		old := &w.ring[at]
		if seq < old.seq {
			return // earlier than every outcome held
		}
		if w.failure(old.o) {
			w.Failures--
		}
		*old = issued[T]{o, seq}
	} else {
		w.N++
		if at == len(w.ring) {
			w.ring = append(w.ring, issued[T]{o, seq})
		} else {
			w.ring[at] = issued[T]{o, seq}
		}
	}
	if w.failure(o) {
		w.Failures++
	}
	w.next++
	if w.next == w.size {
		w.next = 0
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
		if w.ring[prev].seq <= seq {
			break
		}
		w.ring[at], w.ring[prev] = w.ring[prev], w.ring[at]
		at = prev
	}
}

// Reset empties it.
func (w *Ordered[T]) Reset() {
	w.next, w.N, w.Failures = 0, 0, 0
}

// Outcomes returns the held outcomes, oldest first, in a new slice.
func (w *Ordered[T]) Outcomes() []T {
	out := make([]T, 0, w.N)
	start := w.next - w.N
	if start < 0 {
		start += len(w.ring)
	}
	for i := 0; i < w.N; i++ {
		out = append(out, w.ring[(start+i)%len(w.ring)].o)
	}
	return out
}
