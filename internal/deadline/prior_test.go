package deadline

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The prior's sorted copy stays the ring's contents in order, so its
// median is the one sorting a copy of the ring gives.
func TestPriorMedian(t *testing.T) {
	var p Prior
	var ring []time.Duration
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		d := time.Duration(rng.IntN(50)) * 100 * time.Millisecond // repeats on purpose
		p.Add(d)
		ring = append(ring, d)
		if len(ring) > len(p.recent) {
			ring = ring[1:]
		}
		s := slices.Sorted(slices.Values(ring))
		if got, want := time.Duration(p.median.Load()), s[len(s)/2]; got != want {
			t.Fatalf("after %d timeouts: median %v, want %v", i+1, got, want)
		}
	}
}

func BenchmarkPriorAdd(b *testing.B) {
	var p Prior
	b.ReportAllocs()
	var i int
	for b.Loop() {
		i++
		p.Add(time.Duration(i%37) * time.Millisecond)
	}
}
