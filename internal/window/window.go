// Package window is the ring of latest outcomes a circuit judges. It is
// generic so that package circuit can use it without an import cycle.
package window

// Window is a ring of at most size latest outcomes with a running failure
// count. Its buffer grows as outcomes come in. It is not safe for
// concurrent use.
type Window[T any] struct {
	// What a record writes comes first, for an owner's cache line.
	next     int32 // where the next outcome goes; equals N until the ring is full
	N        int32 // how many are held, ≤ size
	Failures int32
	size     int32        // a profile's window: validated far below 2³¹
	Buf      []T          // the ring; len(Buf) < size until it has been full once
	failure  func(T) bool // whether an outcome is a failure; nil: failures are not counted
}

// New returns an empty window of at most size outcomes; failure says
// which outcomes are failures; nil counts none (nor reads what Add replaces).
func New[T any](size int, failure func(T) bool) Window[T] {
	return Window[T]{size: int32(size), failure: failure}
}

// Add records o as the latest outcome.
func (w *Window[T]) Add(o T) {
	if w.N == w.size {
		if w.failure != nil && w.failure(w.Buf[w.next]) {
			w.Failures--
		}
	} else {
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
	if w.failure != nil && w.failure(o) {
		w.Failures++
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
