package breaker

import (
	"time"

	"github.com/breakwater-crawl/breakwater/internal/circuit"
)

// window is a ring of the latest counted outcomes with a running failure
// count: O(1) to record, at most size outcomes. Its buffer grows as
// outcomes come in, so a domain that answers twice in a broad crawl costs
// two outcomes, not a full window. It is not safe for concurrent use; its
// owner locks.
type window struct {
	buf      []Result // the ring; len(buf) < size until it has been full once
	seqs     []uint64 // with addIssued: the order each held outcome's request left in, beside buf
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

// addIssued records o, the outcome of the request that left seq-th, as
// the latest outcomes by the order their requests left: the ring is kept
// in that order, a full one makes room by its earliest, and o is dropped
// if it is earlier than all a full window holds. Colly records a page's
// outcome after those of the pages it visited when it runs synchronously;
// the late successes of a chain of pages answered before a site began
// failing must not push its failures out. An outcome in order costs what
// add does; a late one, a step per later outcome it goes behind. A window
// is filled by add or by addIssued, never both.
func (w *window) addIssued(o Result, seq uint64) {
	if w.n == w.size && seq < w.seqs[w.next] {
		return // earlier than every outcome held
	}
	at := w.next // where add puts o, before it moves behind later ones
	w.add(o)
	if at == len(w.seqs) {
		w.seqs = append(w.seqs, seq)
	} else {
		w.seqs[at] = seq
	}
	// Behind every later outcome, never past the oldest.
	oldest := 0
	if w.n == w.size {
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
		w.buf[at], w.buf[prev] = w.buf[prev], w.buf[at]
		w.seqs[at], w.seqs[prev] = w.seqs[prev], w.seqs[at]
		at = prev
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

// failuresToTrip is how many failures in p's window trip it
// (circuit.FailuresToTrip).
func failuresToTrip(p Profile) int { return circuit.FailuresToTrip(p.FailureThreshold, p.WindowSize) }

// failureRate is the share of failures among the counted results in outs
// (circuit.FailureRate): what a Transition's FailureRate reports.
func failureRate(outs []Result) float64 { return circuit.FailureRate(outs, tally) }

// medianSuccessLatency is the median latency over the successes in outs
// (circuit.MedianSuccessLatency): what a Transition's MedianLatency
// reports.
func medianSuccessLatency(outs []Result) time.Duration {
	return circuit.MedianSuccessLatency(outs, successLatency)
}

// tally says whether r enters the window, and whether it is a failure.
func tally(r Result) (counted, failure bool) { return r.Class.Counted(), r.Class.Failure() }

// successLatency is r's latency, and whether r is a success.
func successLatency(r Result) (time.Duration, bool) { return r.Latency, r.Class == Success }
