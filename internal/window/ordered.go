package window

// Ordered is a Window kept in the order its outcomes' requests left:
// synchronous Colly records a page after the pages it visited, and those
// late successes must not push later failures out. An outcome earlier than
// all a full window holds is dropped.
type Ordered[T any] struct {
	Window[issued[T]] // counting no failures: Add counts them
	failure           func(T) bool
}

// issued is an outcome and the order its request left in.
type issued[T any] struct {
	o   T
	seq uint64
}

// NewOrdered is New for an Ordered window.
func NewOrdered[T any](size int, failure func(T) bool) Ordered[T] {
	return Ordered[T]{New[issued[T]](size, nil), failure}
}

// Add records o, the outcome of the request that left seq-th.
func (w *Ordered[T]) Add(o T, seq uint64) {
	at := w.next // where o goes before it moves behind later outcomes
	if w.N == w.size {
		old := w.Buf[at]
		if seq < old.seq {
			return // earlier than every outcome held
		}
		if w.failure(old.o) {
			w.Failures--
		}
	}
	w.Window.Add(issued[T]{o, seq})
	if w.failure(o) {
		w.Failures++
	}
	// Behind every later outcome, never past the oldest.
	oldest := int32(0)
	if w.N == w.size {
		oldest = w.next
	}
	for at != oldest {
		prev := at - 1
		if prev < 0 {
			prev = w.size - 1
		}
		if w.Buf[prev].seq <= seq {
			break
		}
		w.Buf[at], w.Buf[prev] = w.Buf[prev], w.Buf[at]
		at = prev
	}
}

// Outcomes returns the held outcomes, oldest first, in a new slice.
func (w *Ordered[T]) Outcomes() []T {
	out := make([]T, 0, w.N)
	for _, x := range w.Window.Outcomes() {
		out = append(out, x.o)
	}
	return out
}
