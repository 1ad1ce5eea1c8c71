package breaker_test

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// The closed path (Allow, then Record of a success) allocates nothing,
// also across the tracker's every-100-successes timeout estimate: 200
// round trips a run, after a warm-up that made the domain and its windows.
func TestTheClosedPathAllocatesNothing(t *testing.T) {
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		t.Fatal(err)
	}
	ok := circuit.Result{Class: circuit.Success, Latency: 20 * time.Millisecond}
	round := func() {
		for range 200 {
			tk, err := b.Allow("shop.test")
			if err != nil {
				t.Fatal(err)
			}
			b.Record(tk, ok)
		}
	}
	round()
	if n := testing.AllocsPerRun(20, round); n != 0 {
		t.Errorf("%v allocations per 200 closed Allow+Record, want 0", n)
	}
}
