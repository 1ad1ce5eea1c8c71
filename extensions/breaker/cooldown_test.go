package breaker_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// growing is a two-strikes profile whose cooldown grows to 5 minutes.
func growing() breaker.Profile {
	p := breaker.Standard()
	p.Name, p.WindowSize, p.ConsecutiveFailures, p.HalfOpenProbes = "growing", 4, 2, 1
	p.Cooldown, p.MaxCooldown = time.Minute, 5*time.Minute
	return p
}

func retryAt(t *testing.T, b *breaker.Breaker, host string) time.Time {
	t.Helper()
	_, err := b.Allow(host)
	var open *circuit.OpenError
	if !errors.As(err, &open) {
		t.Fatalf("Allow(%s): %v, want a refusal", host, err)
	}
	return open.RetryAt
}

func do(b *breaker.Breaker, host string, n int, c circuit.Class) {
	for range n {
		if tk, err := b.Allow(host); err == nil {
			b.Record(tk, circuit.Result{Class: c, Latency: time.Millisecond})
		}
	}
}

func TestCooldownGrowsOnRetripsAndDecays(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	b := newBreaker(t, breaker.WithRand(breaker.Config{Profile: growing(), Clock: clk}, func() float64 { return 0.5 }))
	const h = "flaky.test"

	do(b, h, 2, circuit.Degraded) // first trip: exactly the base cooldown
	if got, want := retryAt(t, b, h), clk.Now().Add(time.Minute); !got.Equal(want) {
		t.Fatalf("first trip retry at %v, want base cooldown %v", got, want)
	}
	clk.Advance(time.Minute)
	do(b, h, 1, circuit.Degraded) // the probe fails: second trip in a row
	// base × 2 = 2 min; drawn between 1 and 2 min, at 0.5: 1 min 30 s.
	if got, want := retryAt(t, b, h), clk.Now().Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("second trip retry at %v, want %v", got, want)
	}
	clk.Advance(90 * time.Second)
	do(b, h, 1, circuit.Degraded) // third: between 1 and 3 min → 2 min
	if got, want := retryAt(t, b, h), clk.Now().Add(2*time.Minute); !got.Equal(want) {
		t.Fatalf("third trip retry at %v, want %v", got, want)
	}
	for range 10 { // many more: capped at MaxCooldown, 1 + (5-1)/2 = 3 min
		clk.Set(retryAt(t, b, h))
		do(b, h, 1, circuit.Degraded)
	}
	if got, want := retryAt(t, b, h), clk.Now().Add(3*time.Minute); !got.Equal(want) {
		t.Fatalf("capped retry at %v, want %v", got, want)
	}

	// Recover, then a long healthy stretch: each window of successes in a
	// row takes one trip off the streak, back to the base cooldown.
	clk.Set(retryAt(t, b, h))
	do(b, h, 1, circuit.Success)
	if s := b.State(h); s != circuit.Closed {
		t.Fatalf("state %s after the probe passed", s)
	}
	do(b, h, 4*20, circuit.Success)
	do(b, h, 2, circuit.Degraded)
	if got, want := retryAt(t, b, h), clk.Now().Add(time.Minute); !got.Equal(want) {
		t.Fatalf("after a healthy stretch retry at %v, want the base cooldown again %v", got, want)
	}
}

func TestGrownCooldownsAreJitteredNotLockStep(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	b := newBreaker(t, breaker.Config{Profile: growing(), Clock: clk, Fleet: breaker.FleetGuard{Off: true}})
	hosts := make([]string, 100)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("shop-%d.test", i)
		do(b, hosts[i], 2, circuit.Degraded)
	}
	clk.Advance(time.Minute)
	seen := map[time.Time]bool{}
	for _, h := range hosts {
		do(b, h, 1, circuit.Degraded) // every one re-trips at the same moment
		at := retryAt(t, b, h)
		if at.Before(clk.Now().Add(time.Minute)) || at.After(clk.Now().Add(2*time.Minute)) {
			t.Fatalf("%s retry at %v, outside [1 min, 2 min] from now", h, at.Sub(clk.Now()))
		}
		seen[at] = true
	}
	if len(seen) < 95 {
		t.Fatalf("100 domains re-tripped together reopen at only %d distinct times: lock-step", len(seen))
	}
}
