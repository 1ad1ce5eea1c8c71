package breaker

import (
	"slices"
	"time"
)

// window is a ring of the latest counted outcomes with a running failure
// count: O(1) to record, at most size outcomes. Its buffer grows as
// outcomes come in, so a domain that answers twice in a broad crawl costs
// two outcomes, not a full window. It is not safe for concurrent use; its
// owner locks.
type window struct {
	buf      []Result // the ring; len(buf) < size until it has been full once
	size     int
	next     int // where the next outcome goes; equals n until the ring is full
	n        int // how many are held, ≤ size
	failures int
}

func newWindow(size int) window { return window{size: size} }

func (w *window) add(o Result) {
	if w.n == w.size {
		if w.buf[w.next].Class.Failure() {
			w.failures--
		}
	} else {
		w.n++
	}
	if w.next == len(w.buf) {
		w.buf = append(w.buf, o)
	} else {
		w.buf[w.next] = o
	}
	if o.Class.Failure() {
		w.failures++
	}
	w.next++
	if w.next == w.size {
		w.next = 0
	}
}

func (w *window) full() bool { return w.n == w.size }

func (w *window) reset() {
	w.next, w.n, w.failures = 0, 0, 0
}

// failureRate is failures over outcomes held; 0 when empty.
func (w *window) failureRate() float64 {
	if w.n == 0 {
		return 0
	}
	return float64(w.failures) / float64(w.n)
}

// outcomes returns the held outcomes, oldest first, in a new slice.
func (w *window) outcomes() []Result {
	out := make([]Result, 0, w.n)
	start := w.next - w.n
	if start < 0 {
		start += len(w.buf)
	}
	for i := 0; i < w.n; i++ {
		out = append(out, w.buf[(start+i)%len(w.buf)])
	}
	return out
}

// medianSuccessLatency is the median latency over the successes in outs
// only: timeouts would otherwise make the median the timeout repeated. It
// is what a Transition's MedianLatency reports; a Store's
// own Circuit uses it to describe its evidence the same way.
func medianSuccessLatency(outs []Result) time.Duration {
	lats := make([]time.Duration, 0, len(outs))
	for _, o := range outs {
		if o.Class == Success {
			lats = append(lats, o.Latency)
		}
	}
	if len(lats) == 0 {
		return 0
	}
	slices.Sort(lats)
	return lats[len(lats)/2]
}

// failureRate is the share of failures among the outcomes in outs whose
// Class is Counted, 0 when none is. It is what a Transition's FailureRate
// reports.
func failureRate(outs []Result) float64 {
	n, f := 0, 0
	for _, o := range outs {
		if o.Class.Counted() {
			n++
			if o.Class.Failure() {
				f++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(f) / float64(n)
}
