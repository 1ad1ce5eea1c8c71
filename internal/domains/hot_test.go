package domains

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
)

// TestCachesFollowTheMap checks that the domains found through the
// caches are the map's: one domain whatever the host's case, none kept
// once compacted, and a compacted one not handed out though a cache still
// pointed at it.
func TestCachesFollowTheMap(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b, err := New(Config{Profile: Standard(), Clock: clk, IdleTTL: time.Minute, AlarmAfter: 10, BlockedAfter: 10})
	if err != nil {
		t.Fatal(err)
	}
	ok := circuit.Result{Class: circuit.Success, Latency: 40 * time.Millisecond}
	var first *Domain
	for i, h := range []string{"shop.test", "Shop.Test", "shop.test", "SHOP.TEST", "shop.test"} {
		tk, err := b.Allow(h)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = tk.Domain()
		} else if tk.Domain() != first {
			t.Fatalf("Allow(%q) found another domain than Allow(\"shop.test\")", h)
		}
		b.Record(tk, ok)
	}
	if b.last.Load() != first || b.hot.slot("shop.test").Load() != first {
		t.Fatal("the caches do not hold the domain just used")
	}

	clk.Advance(2 * time.Minute)
	b.Sweep()
	clk.Advance(2 * time.Minute)
	b.Sweep()
	if b.Dormant() != 1 {
		t.Fatalf("%d domains compacted, want 1", b.Dormant())
	}
	if b.last.Load() != nil || b.hot.slot("shop.test").Load() != nil {
		t.Fatal("a cache still holds the compacted domain")
	}

	// A cache pointing at a retired domain (as between a sweep's
	// retirement and its forget) is passed over.
	b.last.Store(first)
	b.hot.slot("shop.test").Store(first)
	tk, err := b.Allow("shop.test")
	if err != nil {
		t.Fatal(err)
	}
	d := tk.Domain()
	if d == first {
		t.Fatal("Allow handed out the compacted domain a cache pointed at")
	}
	if n := d.Counts[circuit.Success].Load(); n != 5 {
		t.Fatalf("revived domain counts %d successes, want 5", n)
	}
	if first.holds.Load() != 0 {
		t.Fatalf("the compacted domain was left pinned (%d)", first.holds.Load())
	}
	b.Record(tk, ok)
	if v, _ := b.domains.Load("shop.test"); v != d || b.hot.slot("shop.test").Load() != d {
		t.Fatal("the revived domain is not the one in the map and its slot")
	}
}
