package window_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/window"
)

// TestWindowGrowsAndKeepsTheLatest checks the growing ring against a plain
// list of the latest outcomes, through random adds and resets, and the
// failures an Ordered window given the same outcomes in order counts.
func TestWindowGrowsAndKeepsTheLatest(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 2, 5, 20, 100} {
		w := window.New[circuit.Result](size)
		ow := window.NewOrdered[outcome](size)
		var ref []circuit.Result
		for step := range 5000 {
			if rnd.IntN(200) == 0 {
				w.Reset()
				ow.Reset()
				ref = nil
				continue
			}
			o := circuit.Result{Class: circuit.Class(rnd.IntN(int(circuit.Excluded) + 1))}
			if !o.Class.Counted() {
				continue
			}
			w.Add(o)
			ow.Add(outcome(o), uint64(step+1))
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
			if got := w.Outcomes(); !slices.Equal(got, ref) || int(ow.Failures) != fails || (int(w.N) == size) != (len(ref) == size) || len(w.Buf) > size {
				t.Fatalf("size %d, step %d: window holds %v (%d failures, full %v, buffer %d), want %v (%d failures)",
					size, step, got, ow.Failures, int(w.N) == size, len(w.Buf), ref, fails)
			}
			if got := ow.Outcomes(); len(got) != len(ref) || !slices.Equal(got, asOutcomes(ref)) {
				t.Fatalf("size %d, step %d: the ordered window holds %v, want %v", size, step, got, ref)
			}
		}
	}
}

// TestOrderedKeepsTheLatestIssued compares Ordered with a model: the size
// outcomes of the latest requests by the order they left, whatever order
// their outcomes come in (mostly in order, some late by a few, some by
// many, as synchronous Colly's parent pages are), through resets.
func TestOrderedKeepsTheLatestIssued(t *testing.T) {
	type rec struct {
		seq  uint64
		fail bool
	}
	for _, size := range []int{1, 2, 10, 20, 50} {
		rnd := rand.New(rand.NewPCG(uint64(size), 3))
		w := window.NewOrdered[outcome](size)
		var model []rec // sorted by seq, at most size
		var issued uint64
		var pending []rec
		for step := range 20000 {
			if rnd.IntN(500) == 0 {
				w.Reset()
				model = model[:0]
			}
			if len(pending) == 0 || rnd.IntN(3) > 0 {
				issued++
				pending = append(pending, rec{issued, rnd.IntN(3) == 0})
				continue
			}
			i := len(pending) - 1 - min(rnd.IntN(4), len(pending)-1) // mostly recent
			if rnd.IntN(10) == 0 {
				i = rnd.IntN(len(pending)) // now and then a long-delayed one
			}
			r := pending[i]
			pending = slices.Delete(pending, i, i+1)
			o := circuit.Result{Class: circuit.Success}
			if r.fail {
				o.Class = circuit.Degraded
			}
			w.Add(outcome(o), r.seq)
			if len(model) < size || r.seq > model[0].seq {
				model = append(model, r)
				slices.SortFunc(model, func(a, b rec) int { return int(a.seq) - int(b.seq) })
				if len(model) > size {
					model = model[1:]
				}
			}
			fails := 0
			for _, m := range model {
				if m.fail {
					fails++
				}
			}
			got := w.Outcomes()
			if int(w.N) != len(model) || int(w.Failures) != fails || len(got) != len(model) {
				t.Fatalf("size %d step %d: window holds %d with %d failures, model %d with %d", size, step, w.N, w.Failures, len(model), fails)
			}
			for j, m := range model {
				if got[j].Class.Failure() != m.fail {
					t.Fatalf("size %d step %d: outcome %d differs from the model", size, step, j)
				}
			}
		}
	}
}

// outcome is a circuit.Result as an Ordered window holds it.
type outcome circuit.Result

func (o outcome) Failed() bool { return o.Class.Failure() }

func asOutcomes(rs []circuit.Result) []outcome {
	out := make([]outcome, len(rs))
	for i, r := range rs {
		out[i] = outcome(r)
	}
	return out
}
