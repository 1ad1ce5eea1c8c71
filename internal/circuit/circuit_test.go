package circuit

import (
	"testing"
	"time"
)

func TestFailuresToTrip(t *testing.T) {
	for _, tc := range []struct {
		window    int
		threshold float64
		want      int
	}{
		{20, 0.5, 10},
		{50, 0.35, 18}, // 17/50 = 0.34 is below
		{10, 0.6, 6},   // exact, no float drift
		{1, 0.01, 1},   // never below one
	} {
		if got := FailuresToTrip(tc.threshold, tc.window); got != tc.want {
			t.Errorf("FailuresToTrip(%d × %v) = %d, want %d", tc.window, tc.threshold, got, tc.want)
		}
	}
}

// out is an outcome as a test writes it: s success, f failure, n neither.
type out struct {
	kind byte
	lat  time.Duration
}

func class(o out) (counted, failure bool) { return o.kind != 'n', o.kind == 'f' }

func success(o out) (time.Duration, bool) { return o.lat, o.kind == 's' }

func TestFailureRateAndMedian(t *testing.T) {
	outs := []out{
		{'s', 30 * time.Millisecond},
		{'f', 5 * time.Second}, // a timeout: not in the median
		{'s', 10 * time.Millisecond},
		{'n', 0}, // not counted
		{'s', 20 * time.Millisecond},
	}
	if got := FailureRate(outs, class); got != 0.25 {
		t.Errorf("FailureRate = %v, want 0.25 (1 failure in 4 counted)", got)
	}
	if got := MedianSuccessLatency(outs, success); got != 20*time.Millisecond {
		t.Errorf("MedianSuccessLatency = %v, want 20ms", got)
	}
	if FailureRate(nil, class) != 0 || MedianSuccessLatency(nil, success) != 0 {
		t.Error("empty outcomes: want 0 and 0")
	}
}
