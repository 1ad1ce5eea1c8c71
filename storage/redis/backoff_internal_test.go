package redis

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestBackoffWindowDoublesUpToTheCap(t *testing.T) {
	base, cap := 15*time.Second, time.Hour
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{
		{0, 15 * time.Second}, {1, 15 * time.Second}, {2, 30 * time.Second}, {3, time.Minute},
		{8, 32 * time.Minute}, {9, time.Hour}, {10, time.Hour}, {64, time.Hour}, {1 << 30, time.Hour},
	} {
		if got := backoffWindow(base, cap, tc.n); got != tc.want {
			t.Errorf("window after failure %d = %v, want %v", tc.n, got, tc.want)
		}
	}
	if got := backoffWindow(time.Millisecond, time.Duration(1<<62), 200); got != time.Duration(1<<62) {
		t.Errorf("huge cap: %v (overflow?)", got)
	}
}

// TestBackoffFullJitterSpreadsUniformly draws 10,000 delays per window and
// checks they fill the window evenly (chi-square over 20 bins), stay inside
// it, and almost never coincide.
func TestBackoffFullJitterSpreadsUniformly(t *testing.T) {
	const draws, bins = 10_000, 20
	r := rand.New(rand.NewPCG(7, 11))
	base, cap := 15*time.Second, time.Hour
	for _, n := range []int{1, 3, 6, 12} {
		w := backoffWindow(base, cap, n)
		var hist [bins]int
		distinct := map[time.Duration]bool{}
		for range draws {
			d := backoffDelay(base, cap, n, r.Float64())
			if d < 0 || d >= w {
				t.Fatalf("failure %d: delay %v outside [0, %v)", n, d, w)
			}
			hist[int(int64(d)*bins/int64(w))]++
			distinct[d] = true
		}
		if chi := chiSquare(hist[:], draws); chi > 43.8 { // 19 degrees of freedom, p = 0.001
			t.Errorf("failure %d: chi-square %.1f over %v: not uniform: %v", n, chi, w, hist)
		}
		if len(distinct) < draws*99/100 {
			t.Errorf("failure %d: only %d distinct delays of %d: lock-step", n, len(distinct), draws)
		}
	}
}

func chiSquare(hist []int, total int) float64 {
	exp := float64(total) / float64(len(hist))
	chi := 0.0
	for _, o := range hist {
		chi += (float64(o) - exp) * (float64(o) - exp) / exp
	}
	return chi
}
