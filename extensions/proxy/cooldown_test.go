package proxy_test

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
)

// probeRound moves the clock to the proxy's probe time and returns how
// many of the next n rotation picks went to it.
func picksOf(t *testing.T, p *proxy.Pool, name string, n int) int {
	t.Helper()
	got := 0
	for range n {
		if pn, err := next(t, p); err == nil && pn == name {
			got++
		}
	}
	return got
}

func TestEjectedProxyGetsOneProbeAfterItsCooldown(t *testing.T) {
	clk := clocktest.NewFake(t0)
	p := mustPool(t, exact(clk, four...))
	fail(t, p, "b.test:2", 3, proxy.ConnectFailed)
	clk.Advance(30*time.Second - time.Nanosecond)
	if got := picksOf(t, p, "b.test:2", 8); got != 0 {
		t.Fatalf("picked %d times before its cooldown passed", got)
	}
	clk.Advance(time.Nanosecond)
	if got := picksOf(t, p, "b.test:2", 8); got != 1 {
		t.Fatalf("picked %d times of 8 once its cooldown passed, want its one probe", got)
	}
	if s := state(p, "b.test:2"); s.State != circuit.HalfOpen {
		t.Fatalf("state %v while its probe is out, want half-open", s.State)
	}
}

func TestPassedProbeRestoresTheProxy(t *testing.T) {
	clk := clocktest.NewFake(t0)
	var restored []string
	cfg := exact(clk, four...)
	cfg.OnRestore = func(s proxy.Snapshot) { restored = append(restored, s.Name) }
	p := mustPool(t, cfg)
	fail(t, p, "b.test:2", 3, proxy.ConnectFailed)
	clk.Advance(30 * time.Second)
	if p.Ejected("b.test:2") { // hands out the probe
		t.Fatal("still ejected after its cooldown")
	}
	fail(t, p, "b.test:2", 1, proxy.Carried)
	if s := state(p, "b.test:2"); s.State != circuit.Closed || len(restored) != 1 {
		t.Fatalf("after a passed probe: %v, OnRestore %v; want closed, one call", s.State, restored)
	}
	if got := picksOf(t, p, "b.test:2", 8); got != 2 {
		t.Fatalf("a restored proxy got %d of 8 picks, want 2", got)
	}
}

func TestFailedProbeEjectsForLongerEachTimeUpToTheCap(t *testing.T) {
	clk := clocktest.NewFake(t0)
	cfg := exact(clk, four...)
	cfg.MaxCooldown = 100 * time.Second
	p := mustPool(t, cfg)
	fail(t, p, "b.test:2", 3, proxy.ConnectFailed)
	// Cooldown × ejections in a row: 30 s, 60 s, 90 s, then the cap.
	for i, want := range []time.Duration{30, 60, 90, 100, 100} {
		want *= time.Second
		s := state(p, "b.test:2")
		if got := s.RetryAt.Sub(clk.Now()); got != want || s.Ejections != i+1 {
			t.Fatalf("ejection %d: cooldown %v (%d ejections), want %v", i+1, got, s.Ejections, want)
		}
		clk.Advance(want)
		if p.Ejected("b.test:2") {
			t.Fatalf("ejection %d: no probe after %v", i+1, want)
		}
		if !p.Ejected("b.test:2") {
			t.Fatal("a second probe handed out while the first is in flight")
		}
		fail(t, p, "b.test:2", 1, proxy.ConnectFailed)
	}
}

func TestStreakWearsOffWhileTheProxyStaysIn(t *testing.T) {
	clk := clocktest.NewFake(t0)
	p := mustPool(t, exact(clk, four...))
	eject := func() {
		fail(t, p, "b.test:2", 3, proxy.ConnectFailed)
	}
	restore := func(after time.Duration) {
		clk.Advance(after)
		p.Ejected("b.test:2")
		fail(t, p, "b.test:2", 1, proxy.Carried)
	}
	eject()
	restore(30 * time.Second)
	eject() // at once: second in a row
	if got := state(p, "b.test:2").RetryAt.Sub(clk.Now()); got != 60*time.Second {
		t.Fatalf("ejected again at once: cooldown %v, want 60s", got)
	}
	restore(60 * time.Second)
	clk.Advance(60 * time.Second) // two cooldowns in the rotation work off two ejections
	eject()
	if got := state(p, "b.test:2").RetryAt.Sub(clk.Now()); got != 30*time.Second {
		t.Fatalf("ejected after a healthy minute: cooldown %v, want 30s again", got)
	}
}

func TestJitterShortensTheCooldownWithinItsShare(t *testing.T) {
	clk := clocktest.NewFake(t0)
	cfg := exact(clk, four...)
	cfg.Jitter = 0.5
	p := mustPool(t, cfg)
	fail(t, p, "b.test:2", 3, proxy.ConnectFailed)
	got := state(p, "b.test:2").RetryAt.Sub(clk.Now())
	if got < 15*time.Second || got > 30*time.Second {
		t.Fatalf("cooldown %v with jitter 0.5 of 30s, want within [15s, 30s]", got)
	}
	clk.Advance(15*time.Second - time.Nanosecond)
	if !p.Ejected("b.test:2") {
		t.Fatal("probed before the shortest jittered cooldown")
	}
	clk.Advance(15*time.Second + time.Nanosecond)
	if p.Ejected("b.test:2") {
		t.Fatal("not probed after the full cooldown")
	}
}

func TestLostProbeIsHandedOutAgain(t *testing.T) {
	clk := clocktest.NewFake(t0)
	p := mustPool(t, exact(clk, four...))
	fail(t, p, "b.test:2", 3, proxy.ConnectFailed)
	clk.Advance(30 * time.Second)
	p.Ejected("b.test:2") // the probe, never recorded
	clk.Advance(30*time.Second - time.Nanosecond)
	if !p.Ejected("b.test:2") {
		t.Fatal("a second probe before the first was given up")
	}
	clk.Advance(time.Nanosecond)
	if p.Ejected("b.test:2") {
		t.Fatal("a probe never recorded blocks the proxy for good")
	}
	fail(t, p, "b.test:2", 1, proxy.Carried)
	if s := state(p, "b.test:2"); s.State != circuit.Closed {
		t.Fatalf("state %v after the new probe passed, want closed", s.State)
	}
}

func TestResultsWhileEjectedCountInStatsOnly(t *testing.T) {
	clk := clocktest.NewFake(t0)
	p := mustPool(t, exact(clk, four...))
	fail(t, p, "b.test:2", 3, proxy.ConnectFailed)
	fail(t, p, "b.test:2", 2, proxy.Carried) // in flight when it was ejected
	s := state(p, "b.test:2")
	if s.State != circuit.Open || s.Outcomes[proxy.Carried.String()] != 2 || s.Outcomes[proxy.ConnectFailed.String()] != 3 {
		t.Fatalf("after late results: %+v, want still open, counts 3 connect_failed and 2 carried", s)
	}
	clk.Advance(30 * time.Second)
	p.Ejected("b.test:2")
	fail(t, p, "b.test:2", 1, proxy.NotJudged) // the probe says nothing: the slot is free again
	if s := state(p, "b.test:2"); s.State != circuit.HalfOpen {
		t.Fatalf("after a NotJudged probe: %v, want still half-open", s.State)
	}
	if p.Ejected("b.test:2") {
		t.Fatal("no new probe after a NotJudged one")
	}
}

func TestEveryProbeMustPassWithSeveralProbes(t *testing.T) {
	clk := clocktest.NewFake(t0)
	cfg := exact(clk, four...)
	cfg.Settings = proxy.DefaultSettings
	cfg.Settings.HalfOpenProbes = 2
	p := mustPool(t, cfg)
	fail(t, p, "b.test:2", 3, proxy.ConnectFailed)
	clk.Advance(30 * time.Second)
	if got := picksOf(t, p, "b.test:2", 8); got != 2 {
		t.Fatalf("%d probes handed out, want HalfOpenProbes = 2", got)
	}
	fail(t, p, "b.test:2", 1, proxy.Carried)
	if s := state(p, "b.test:2"); s.State != circuit.HalfOpen {
		t.Fatalf("after 1 of 2 probes passed: %v, want still half-open", s.State)
	}
	fail(t, p, "b.test:2", 1, proxy.Carried)
	if s := state(p, "b.test:2"); s.State != circuit.Closed {
		t.Fatalf("after 2 of 2 probes passed: %v, want closed", s.State)
	}
}
