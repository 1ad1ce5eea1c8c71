package proxy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
)

func TestAtMostHalfThePoolIsEjected(t *testing.T) {
	clk := clocktest.NewFake(t0)
	var said []error
	cfg := exact(clk, four...)
	cfg.OnClientSide = func(err error) { said = append(said, err) }
	p := mustPool(t, cfg)
	fail(t, p, "a.test:1", 3, proxy.ConnectFailed)
	fail(t, p, "b.test:2", 3, proxy.ConnectFailed)
	if err := p.ClientSide(); err != nil {
		t.Fatalf("two of four ejected: ClientSide %v, want nil (the proxies' own failures)", err)
	}
	fail(t, p, "c.test:3", 3, proxy.ConnectFailed)
	if s := state(p, "c.test:3"); s.State != circuit.Closed || s.Ejections != 0 {
		t.Fatal("a third of four ejected past MaxEjectedShare 0.5")
	}
	err := p.ClientSide()
	if !errors.Is(err, proxy.ErrClientSide) || len(said) != 1 || said[0].Error() != err.Error() {
		t.Fatalf("ClientSide %v, hook %v: want ErrClientSide, told once", err, said)
	}
	for _, name := range []string{"a.test:1", "b.test:2", "c.test:3"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("ClientSide's error %q does not name %s", err, name)
		}
	}
	if s := state(p, "c.test:3"); !s.Held || s.State != circuit.Closed {
		t.Fatalf("the kept proxy: %+v, want closed and held", s)
	}
	// Kept in the rotation with a fresh circuit: three more failures say it again.
	fail(t, p, "c.test:3", 3, proxy.ConnectFailed)
	if len(said) != 2 {
		t.Fatalf("hook called %d times after the kept proxy failed 3 more, want 2", len(said))
	}
	// A request it carries clears the suspicion.
	fail(t, p, "c.test:3", 1, proxy.Carried)
	if err := p.ClientSide(); err != nil {
		t.Fatalf("after the kept proxy carried a request: ClientSide %v, want nil", err)
	}
}

func TestRestoredProxyMakesRoomForAnEjection(t *testing.T) {
	clk := clocktest.NewFake(t0)
	p := mustPool(t, exact(clk, four...))
	fail(t, p, "a.test:1", 3, proxy.ConnectFailed)
	fail(t, p, "b.test:2", 3, proxy.ConnectFailed)
	clk.Advance(30 * time.Second)
	p.Ejected("a.test:1")
	fail(t, p, "a.test:1", 1, proxy.Carried)
	fail(t, p, "c.test:3", 3, proxy.ConnectFailed)
	if !p.Ejected("c.test:3") || p.ClientSide() != nil {
		t.Fatalf("with a restored, c.test:3 not ejected (or ClientSide %v)", p.ClientSide())
	}
}

func TestMaxEjectedShareRoundsDownButEjectsOne(t *testing.T) {
	for _, tc := range []struct {
		proxies int
		share   float64
		most    int
	}{{1, 0.5, 1}, {2, 0.5, 1}, {3, 0.5, 1}, {4, 0.5, 2}, {5, 0.5, 2}, {10, 0.3, 3}, {4, 1, 4}} {
		cfg := exact(clocktest.NewFake(t0))
		for i := range tc.proxies {
			cfg.Proxies = append(cfg.Proxies, fmt.Sprintf("http://p.test:%d", 1000+i))
		}
		cfg.MaxEjectedShare = tc.share
		p := mustPool(t, cfg)
		for _, u := range cfg.Proxies {
			fail(t, p, u, 3, proxy.ConnectFailed)
		}
		ejected := 0
		for _, s := range p.Stats() {
			if s.State == circuit.Open {
				ejected++
			}
		}
		if ejected != tc.most {
			t.Errorf("%d proxies, share %v, all failing: %d ejected, want %d", tc.proxies, tc.share, ejected, tc.most)
		}
		if !errors.Is(p.ClientSide(), proxy.ErrClientSide) {
			t.Errorf("%d proxies, share %v, all failing: ClientSide nil", tc.proxies, tc.share)
		}
	}
}
