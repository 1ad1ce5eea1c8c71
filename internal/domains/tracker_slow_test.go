package domains

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// TestSlowCallRule checks the slow-call signal against a plain list of
// the latest counted outcomes' slow flags, cleared at each transition,
// through long healthy stretches (the flags' ring is then not touched) and
// slow bursts.
func TestSlowCallRule(t *testing.T) {
	p := trackerSettings{WindowSize: 20, SlowCall: time.Second, SlowCallRate: 0.5}
	need := circuit.Settings{WindowSize: p.WindowSize, FailureThreshold: p.SlowCallRate}.FailuresToTrip()
	tr := newTracker(100, &p, new(sync.Mutex))
	rnd := rand.New(rand.NewPCG(5, 6))
	var flags []bool
	slowRate := 0.0
	for step := range 50000 {
		if step%500 == 0 {
			slowRate = []float64{0, 0, 0.1, 0.6}[rnd.IntN(4)]
		}
		if rnd.IntN(300) == 0 {
			tr.Transitioned(circuit.Transition{From: circuit.Closed, To: circuit.Open, Reason: circuit.ReasonSlowCalls})
			flags = flags[:0]
		}
		o := circuit.Result{Class: circuit.Success, Latency: 100 * time.Millisecond}
		switch r := rnd.Float64(); {
		case r < slowRate:
			o.Latency = 2 * time.Second
		case r < slowRate+0.05:
			o.Class = circuit.Degraded
		case r < slowRate+0.08:
			o.Class = circuit.Throttled // not counted
		}
		s := tr.ObserveLocked(o, 0, 0)
		if o.Class.Counted() {
			flags = append(flags, o.Class == circuit.Success && o.Latency > p.SlowCall)
			if len(flags) > p.WindowSize {
				flags = flags[1:]
			}
		}
		n := 0
		for _, f := range flags {
			if f {
				n++
			}
		}
		// An outcome not counted says nothing.
		want := o.Class.Counted() && len(flags) == p.WindowSize && n >= need
		if s.SlowTrip != want {
			t.Fatalf("step %d: SlowTrip %v, want %v (%d slow of %d)", step, s.SlowTrip, want, n, len(flags))
		}
	}
}
