package window

// Ordered is a Window kept in the order its outcomes' requests left:
// synchronous Colly records a page after the pages it visited, and those
// late successes must not push later failures out. An outcome earlier than
// all a full window holds is dropped.
//
// T tells its failures (Outcome): a method, not a func beside the window,
// so that an in-process circuit holding one fits its size class.
type Ordered[T Outcome] struct {
	Window[issued[T]] // whose Failures Ordered counts
}

// Outcome is what an Ordered window holds.
type Outcome interface {
	// Failed says whether the outcome is a failure.
	Failed() bool
}

// issued is an outcome and the order its request left in.
type issued[T any] struct {
	o   T
	seq uint64
}

// NewOrdered is New for an Ordered window.
func NewOrdered[T Outcome](size int) Ordered[T] {
	return Ordered[T]{Window: New[issued[T]](size)}
}

// Add records o, the outcome of the request that left seq-th.
func (w *Ordered[T]) Add(o T, seq uint64) {
	at := w.next // where o goes before it moves behind later outcomes
	if w.N == w.size {
		old := w.Buf[at]
		if seq < old.seq {
			return // earlier than every outcome held
		}
		if old.o.Failed() {
			w.Failures--
		}
	}
	w.Window.Add(issued[T]{o, seq})
	if o.Failed() {
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
