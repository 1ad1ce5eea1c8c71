// Package window is the ring of latest outcomes a circuit judges. It is
// generic so that package circuit can use it without an import cycle.
package window

// Window is a ring of at most size latest outcomes (Ordered counts its
// failures). Its buffer grows as outcomes come in. It is not safe for
// concurrent use.
type Window[T any] struct {
	// What a record writes comes first, for an owner's cache line.
	next int32 // where the next outcome goes; equals N until the ring is full
	N    int32 // how many are held, ≤ size
	size int32 // a profile's window: validated far below 2³¹
	// Failures is how many held are failures, as Ordered counts them (a
	// Window alone leaves it 0): here, in what would be padding.
	Failures int32
	Buf      []T // the ring; len(Buf) < size until it has been full once
}

// New returns an empty window of at most size outcomes.
func New[T any](size int) Window[T] {
	return Window[T]{size: int32(size)}
}

// Add records o as the latest outcome.
func (w *Window[T]) Add(o T) {
	if w.N < w.size {
		w.N++
	}
	if int(w.next) == len(w.Buf) {
		if len(w.Buf) == cap(w.Buf) { // double, but never past size: append would round a 20 up to 32
			w.Buf = append(make([]T, 0, min(max(2*cap(w.Buf), 2), int(w.size))), w.Buf...)
		}
		w.Buf = append(w.Buf, o)
	} else {
		w.Buf[w.next] = o
	}
	w.next++
	if w.next == w.size {
		w.next = 0
	}
}

// Reset empties it.
func (w *Window[T]) Reset() {
	w.next, w.N, w.Failures = 0, 0, 0
}

// Outcomes returns the held outcomes, oldest first, in a new slice.
func (w *Window[T]) Outcomes() []T {
	out := make([]T, 0, w.N)
	start := int(w.next - w.N)
	if start < 0 {
		start += len(w.Buf)
	}
	for i := range int(w.N) {
		out = append(out, w.Buf[(start+i)%len(w.Buf)])
	}
	return out
}
