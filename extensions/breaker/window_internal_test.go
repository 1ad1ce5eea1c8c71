package breaker

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWindowGrowsAndKeepsTheLatest checks the growing ring against a plain
// list of the latest outcomes, through random adds and resets.
func TestWindowGrowsAndKeepsTheLatest(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 2, 5, 20, 100} {
		w := newWindow(size)
		var ref []Outcome
		for step := range 5000 {
			if rnd.IntN(200) == 0 {
				w.reset()
				ref = nil
				continue
			}
			o := Outcome{Class: Class(rnd.IntN(int(numClasses)))}
			if !o.Class.Counted() {
				continue
			}
			w.add(o)
			ref = append(ref, o)
			if len(ref) > size {
				ref = ref[1:]
			}
			fails := 0
			for _, r := range ref {
				if r.Class.Failure() {
					fails++
				}
			}
			if got := w.outcomes(); !slices.Equal(got, ref) || w.failures != fails || w.full() != (len(ref) == size) || len(w.buf) > size {
				t.Fatalf("size %d, step %d: window holds %v (%d failures, full %v, buffer %d), want %v (%d failures)",
					size, step, got, w.failures, w.full(), len(w.buf), ref, fails)
			}
		}
	}
}
