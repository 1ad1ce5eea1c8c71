package breaker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// A domain held open from outside refuses until the given time, is probed
// after it, and says why in its transition.
func TestHoldOpenRefusesUntilThenProbes(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	var seen []circuit.Transition
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk, OnTransition: func(t circuit.Transition) { seen = append(seen, t) }})
	if err != nil {
		t.Fatal(err)
	}
	until := clk.Now().Add(90 * time.Second)
	if err := b.HoldOpen("Shop.example", until, "robots_unavailable"); err != nil {
		t.Fatal(err)
	}
	var open *circuit.OpenError
	if _, err := b.Allow("shop.example"); !errors.As(err, &open) || !open.RetryAt.Equal(until) {
		t.Fatalf("Allow while held: %v, want a refusal until %v", err, until)
	}
	if len(seen) != 1 || seen[0].To != circuit.Open || seen[0].Reason != "robots_unavailable" {
		t.Fatalf("transitions %+v: want one to open, reason robots_unavailable", seen)
	}
	// Held again for less: never shorter.
	b.HoldOpen("shop.example", clk.Now().Add(time.Second), "robots_unavailable")
	clk.Advance(30 * time.Second)
	if _, err := b.Allow("shop.example"); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("Allow 30 s in: %v, want still refused", err)
	}
	clk.Advance(61 * time.Second)
	tk, err := b.Allow("shop.example")
	if err != nil {
		t.Fatalf("Allow after the hold: %v, want a probe", err)
	}
	b.Record(tk, circuit.Result{Class: circuit.Success})
	if s := b.State("shop.example"); s != circuit.HalfOpen {
		t.Errorf("after one probe of two: %v, want half-open", s)
	}
}

// A least gap set from outside (a Crawl-delay) is the domain's pace from
// then on, and only ever raises it.
func TestSetMinGapRaisesTheDomainsLeastGap(t *testing.T) {
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{Parallelism: 2, MinGap: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	gap := func(host string) time.Duration {
		for _, s := range b.Stats() {
			if s.Domain == host {
				return s.Pace.Gap
			}
		}
		return -1
	}
	if err := b.SetMinGap("slow.example", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	b.SetMinGap("slow.example", time.Second) // lower: ignored
	b.SetMinGap("fast.example", 10*time.Millisecond)
	if g := gap("slow.example"); g != 5*time.Second {
		t.Errorf("slow.example gap %v, want 5s", g)
	}
	if g := gap("fast.example"); g != 100*time.Millisecond {
		t.Errorf("fast.example gap %v, want the user's 100ms (a lower gap changes nothing)", g)
	}
}

// A domain held open from outside, once it has recovered and gone idle,
// is compacted like any other: HoldOpen does not keep it pinned whole for
// the rest of the run (a million-domain crawl whose robots.txt answered
// 5xx now and then would keep every such domain whole).
func TestAHeldDomainCompactsOnceRecoveredAndIdle(t *testing.T) {
	const ttl = 10 * time.Second
	clk := clocktest.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk, IdleTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.HoldOpen("held.example", clk.Now().Add(time.Second), "robots_unavailable"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	for range breaker.Standard().HalfOpenProbes {
		tk, err := b.Allow("held.example")
		if err != nil {
			t.Fatalf("probe after the hold: %v", err)
		}
		b.Record(tk, circuit.Result{Class: circuit.Success})
	}
	if s := b.State("held.example"); s != circuit.Closed {
		t.Fatalf("after the probes: %v, want closed", s)
	}
	b.Compact()
	clk.Advance(ttl)
	b.Compact()
	if got := b.Dormant(); got != 1 {
		t.Fatalf("a recovered held domain idle for %v: %d domains compacted, want 1", ttl, got)
	}
}
