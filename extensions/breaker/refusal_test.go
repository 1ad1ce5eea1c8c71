package breaker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// On the system clock a cached refusal ends by a timer instead of a clock
// read on every refusal. It must never end early, must end soon after
// RetryAt, and a re-trip must start a fresh one.
func TestCachedRefusalOnTheSystemClock(t *testing.T) {
	p := breaker.Standard()
	p.Name = "quick"
	p.ConsecutiveFailures = 1
	p.HalfOpenProbes = 1
	p.Cooldown = 30 * time.Millisecond
	p.MaxCooldown = p.Cooldown
	b := newBreaker(t, breaker.Config{Profile: p})
	const host = "down.test"

	trip := func() time.Time {
		t.Helper()
		tk, err := b.Allow(host)
		if err != nil {
			t.Fatalf("Allow before the trip: %v", err)
		}
		b.Record(tk, circuit.Result{Class: circuit.Degraded, Latency: time.Millisecond})
		_, err = b.Allow(host)
		var open *circuit.OpenError
		if !errors.As(err, &open) || open.State != circuit.Open {
			t.Fatalf("Allow right after the trip: %v, want a refusal from an open circuit", err)
		}
		return open.RetryAt
	}
	// waitTicket refuses until it is allowed, and returns when that was.
	waitTicket := func(retryAt time.Time) (breaker.Ticket, int) {
		t.Helper()
		deadline := retryAt.Add(2 * time.Second)
		for refused := 0; ; refused++ {
			tk, err := b.Allow(host)
			now := time.Now()
			if err == nil {
				if now.Before(retryAt) {
					t.Fatalf("allowed at %v, %v before RetryAt", now, retryAt.Sub(now))
				}
				return tk, refused
			}
			if !errors.Is(err, breaker.ErrOpen) {
				t.Fatalf("Allow: %v, want a refusal", err)
			}
			if now.After(deadline) {
				t.Fatalf("still refused %v after RetryAt: the cached refusal never ended", now.Sub(retryAt))
			}
			time.Sleep(time.Millisecond)
		}
	}

	first := trip()
	probe, refused := waitTicket(first)
	if refused == 0 {
		t.Fatal("no refusal before RetryAt")
	}
	// The probe fails: open again, with a new RetryAt, cached afresh.
	b.Record(probe, circuit.Result{Class: circuit.Degraded, Latency: time.Millisecond})
	_, err := b.Allow(host)
	var open *circuit.OpenError
	if !errors.As(err, &open) || !open.RetryAt.After(first) {
		t.Fatalf("after the failed probe: %v, want a refusal until after %v", err, first)
	}
	probe, _ = waitTicket(open.RetryAt)
	b.Record(probe, circuit.Result{Class: circuit.Success, Latency: time.Millisecond})
	if s := b.State(host); s != circuit.Closed {
		t.Fatalf("state %s after the passing probe, want closed", s)
	}
	if _, err := b.Allow(host); err != nil {
		t.Fatalf("Allow on the closed circuit: %v", err)
	}
}
