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
		var ref []Result
		for step := range 5000 {
			if rnd.IntN(200) == 0 {
				w.reset()
				ref = nil
				continue
			}
			o := Result{Class: Class(rnd.IntN(int(numClasses)))}
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

// TestDormantRecordRoundTrips encodes random dormant records and reads
// them back whole.
func TestDormantRecordRoundTrips(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	base := int64(1_800_000_000_000_000_000)
	for range 2000 {
		var r dormant
		for c := range numClasses {
			r.counts[c] = rnd.Uint32() >> rnd.IntN(32)
		}
		r.refused, r.trips, r.streak, r.healthyRun = rnd.Uint32(), rnd.Uint32()>>20, uint32(rnd.IntN(5)), uint32(rnd.IntN(50))
		r.fails, r.netFails, r.pauses, r.successes, r.tracked = rnd.Uint32(), rnd.Uint32(), rnd.Uint32()>>16, rnd.Uint32(), uint32(rnd.IntN(101))
		r.slowN, r.slowNext = uint16(rnd.IntN(51)), uint16(rnd.IntN(50))
		r.rate = rnd.Float32()
		r.baseFlight = uint32(rnd.IntN(200))
		r.median, r.baseline, r.timeout, r.pausedFor = rnd.Int64N(1e11), rnd.Int64N(1e10), rnd.Int64N(1e11), rnd.Int64()
		for _, p := range []*int64{&r.lastOK, &r.lastSeen} {
			switch rnd.IntN(3) {
			case 0: // never
			case 1:
				*p = base + rnd.Int64N(1e15)
			default:
				*p = base - rnd.Int64N(1e12) // before the breaker was made (a shared clock)
			}
		}
		if got := decodeDormant(r.encode(base), base); got != r {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
		}
	}
}

// TestWindowKeepsTheLatestIssued compares addIssued with a model: the size
// outcomes of the latest requests by the order they left, whatever order
// their outcomes come in (mostly in order, some late by a few, some by
// many, as synchronous Colly's parent pages are), through resets.
func TestWindowKeepsTheLatestIssued(t *testing.T) {
	type rec struct {
		seq  uint64
		fail bool
	}
	for _, size := range []int{1, 2, 10, 20, 50} {
		rnd := rand.New(rand.NewPCG(uint64(size), 3))
		w := newWindow(size)
		var model []rec // sorted by seq, at most size
		var issued uint64
		var pending []rec
		for step := range 20000 {
			if rnd.IntN(500) == 0 {
				w.reset()
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
			o := Result{Class: Success}
			if r.fail {
				o.Class = Degraded
			}
			w.addIssued(o, r.seq)
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
			got := w.outcomes()
			if w.n != len(model) || w.failures != fails || len(got) != len(model) {
				t.Fatalf("size %d step %d: window holds %d with %d failures, model %d with %d", size, step, w.n, w.failures, len(model), fails)
			}
			for j, m := range model {
				if got[j].Class.Failure() != m.fail {
					t.Fatalf("size %d step %d: outcome %d differs from the model", size, step, j)
				}
			}
		}
	}
}
