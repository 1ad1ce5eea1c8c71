package breaker_test

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// record sends n successes of latency lat to host through the public API.
func recordSuccesses(t *testing.T, b *breaker.Breaker, clk *clocktest.Fake, host string, n int, lat time.Duration) {
	t.Helper()
	for range n {
		tk, err := b.Allow(host)
		if err != nil {
			t.Fatalf("%s refused: %v", host, err)
		}
		clk.Advance(time.Millisecond)
		b.Record(tk, circuit.Result{Class: circuit.Success, Latency: lat})
	}
}

// When every domain slows down at once, the slowness is the crawler's own
// (a stalled process, a saturated CPU or uplink), not the sites': a
// latency-slope trip then would close healthy sites. One domain slowing
// alone still trips.
func TestLatencySlopeDoesNotTripWhenEveryDomainSlowsAtOnce(t *testing.T) {
	p := breaker.Aggressive()
	clk := clocktest.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	b := newBreaker(t, breaker.Config{Profile: p, Clock: clk})
	hosts := []string{"a.example", "b.example", "c.example"}
	for _, h := range hosts {
		recordSuccesses(t, b, clk, h, p.WindowSize+5, 10*time.Millisecond)
	}
	// The client stalls: every domain's answers take 300 ms, interleaved.
	for range 30 {
		for _, h := range hosts {
			recordSuccesses(t, b, clk, h, 1, 300*time.Millisecond)
		}
	}
	for _, h := range hosts {
		if s := b.State(h); s != circuit.Closed {
			t.Errorf("%s: %v after every domain slowed at once; want closed (the slowness is the client's)", h, s)
		}
	}

	// One domain slowing alone is the site's: it trips.
	b2 := newBreaker(t, breaker.Config{Profile: p, Clock: clk})
	for _, h := range hosts {
		recordSuccesses(t, b2, clk, h, p.WindowSize+5, 10*time.Millisecond)
	}
	for i := range 30 {
		recordSuccesses(t, b2, clk, "a.example", 1, 300*time.Millisecond)
		for _, h := range hosts[1:] {
			recordSuccesses(t, b2, clk, h, 1, 10*time.Millisecond)
		}
		if b2.State("a.example") == circuit.Open {
			t.Logf("a.example tripped after %d slow answers", i+1)
			break
		}
	}
	if s := b2.State("a.example"); s != circuit.Open {
		t.Errorf("a.example alone slowed: %v, want open (latency slope)", s)
	}
}

// A delay of the crawler's own adds the same to every domain's latency:
// it crosses the slope limit of a fast domain (a redirecting host
// answering in 1 ms: its limit is its baseline plus the floor) before the
// limit of a slower one (100 ms: 2.5 times it), which still slowed by as
// much (chaos/SEEDS.md, 11379924317260629200).
func TestLatencySlopeDoesNotTripOnADelayEveryDomainShares(t *testing.T) {
	p := breaker.Aggressive()
	clk := clocktest.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	b := newBreaker(t, breaker.Config{Profile: p, Clock: clk})
	base := map[string]time.Duration{"fast.example": time.Millisecond, "b.example": 100 * time.Millisecond, "c.example": 100 * time.Millisecond}
	for h, lat := range base {
		recordSuccesses(t, b, clk, h, p.WindowSize+5, lat)
	}
	const delay = 120 * time.Millisecond // past the fast host's limit (101 ms), within the others' (250 ms)
	for range 30 {
		for h, lat := range base {
			recordSuccesses(t, b, clk, h, 1, lat+delay)
		}
	}
	for h := range base {
		if s := b.State(h); s != circuit.Closed {
			t.Errorf("%s: %v after every domain slowed by %v at once; want closed (the delay is the client's)", h, s, delay)
		}
	}
}
