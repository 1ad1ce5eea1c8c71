package circuit

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

func TestFailuresToTrip(t *testing.T) {
	for _, tc := range []struct {
		p    breaker.Profile
		want int
	}{
		{breaker.Standard(), 10},
		{breaker.Profile{WindowSize: 50, FailureThreshold: 0.35}, 18}, // 17/50 = 0.34 is below
		{breaker.Profile{WindowSize: 10, FailureThreshold: 0.6}, 6},   // exact, no float drift
		{breaker.Profile{WindowSize: 1, FailureThreshold: 0.01}, 1},   // never below one
	} {
		if got := FailuresToTrip(tc.p); got != tc.want {
			t.Errorf("FailuresToTrip(%d × %v) = %d, want %d", tc.p.WindowSize, tc.p.FailureThreshold, got, tc.want)
		}
	}
}

func TestFailureRateAndMedian(t *testing.T) {
	outs := []breaker.Result{
		{Class: breaker.Success, Latency: 30 * time.Millisecond},
		{Class: breaker.Degraded, Latency: 5 * time.Second}, // a timeout: not in the median
		{Class: breaker.Success, Latency: 10 * time.Millisecond},
		{Class: breaker.Gone}, // not counted
		{Class: breaker.Success, Latency: 20 * time.Millisecond},
	}
	if got := FailureRate(outs); got != 0.25 {
		t.Errorf("FailureRate = %v, want 0.25 (1 failure in 4 counted)", got)
	}
	if got := MedianSuccessLatency(outs); got != 20*time.Millisecond {
		t.Errorf("MedianSuccessLatency = %v, want 20ms", got)
	}
	if FailureRate(nil) != 0 || MedianSuccessLatency(nil) != 0 {
		t.Error("empty outcomes: want 0 and 0")
	}
}
