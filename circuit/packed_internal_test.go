package circuit

import (
	"testing"
	"time"
)

// The window holds a result in one word: every class and every latency a
// request can take come back as they went in; what no request takes (a
// negative latency, one past 2.2 years) is held at the nearest bound.
func TestAPackedResultIsTheResult(t *testing.T) {
	max := time.Duration(1<<latencyBits - 1)
	for c := range numClasses {
		for _, lat := range []time.Duration{0, 1, 37 * time.Millisecond, 10 * time.Second, 365 * 24 * time.Hour, max} {
			r := Result{Class: Class(c), Latency: lat}
			if got := pack(r).result(); got != r {
				t.Fatalf("pack(%v).result() = %v", r, got)
			}
			if pack(r).Failed() != r.Class.Failure() {
				t.Fatalf("pack(%v).failed() = %v, want %v", r, pack(r).Failed(), r.Class.Failure())
			}
		}
		for lat, want := range map[time.Duration]time.Duration{-time.Second: 0, max + 1: max, 1<<63 - 1: max} {
			if got := pack(Result{Class: Class(c), Latency: lat}).result(); got != (Result{Class: Class(c), Latency: want}) {
				t.Fatalf("pack of class %d, latency %v: %v, want latency %v", c, lat, got, want)
			}
		}
	}
}
