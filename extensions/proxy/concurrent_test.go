package proxy_test

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/rs/zerolog"
)

// Many goroutines rotate, record and read at once while time moves: run
// with -race. Every request handed out is recorded, so every count adds
// up.
func TestPoolIsSafeForConcurrentUse(t *testing.T) {
	clk := clocktest.NewFake(t0)
	cfg := exact(clk, four...)
	cfg.OnEject = func(proxy.Snapshot) {}
	p := mustPool(t, cfg)
	pf := p.ProxyFunc()
	var wg sync.WaitGroup
	var asked atomic.Int64 // Ejected answers that handed out a request, never recorded
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				r, _ := http.NewRequest("GET", "http://site.test/", nil)
				u, err := pf(r)
				if err != nil {
					continue
				}
				o := proxy.Carried
				if proxy.Name(u) == "b.test:2" || (g == 0 && i%7 == 0) {
					o = proxy.ConnectFailed
				}
				if err := p.RecordOutcome(u.String(), o, time.Millisecond); err != nil {
					t.Error(err)
				}
				if i%50 == 0 {
					p.Stats()
					p.ClientSide()
					if !p.Ejected("c.test:3") {
						asked.Add(1)
					}
				}
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			clk.Advance(time.Second)
		}
	})
	wg.Wait()
	var sent, recorded int64
	for _, s := range p.Stats() {
		sent += s.Sent
		for _, n := range s.Outcomes {
			recorded += n
		}
	}
	if sent != recorded+asked.Load() {
		t.Fatalf("%d sent, %d recorded, %d handed out by Ejected", sent, recorded, asked.Load())
	}
	if s := state(p, "b.test:2"); s.Ejections == 0 && !s.Held || s.Outcomes[proxy.Carried.String()] != 0 {
		t.Fatalf("b.test:2, always failing: %+v, want ejected (or held by the share rule)", s)
	}
}

func TestEventsAreLoggedWithoutCredentialsAndHooksMayCallThePool(t *testing.T) {
	clk := clocktest.NewFake(t0)
	var buf bytes.Buffer
	cfg := exact(clk, "http://user:secret@a.test:1", "http://user:secret@b.test:2")
	cfg.Logger = zerolog.New(&buf)
	var p *proxy.Pool
	var inHook []proxy.Snapshot
	cfg.OnEject = func(proxy.Snapshot) { inHook = append(inHook, p.Stats()...) } // no deadlock: called outside the lock
	cfg.OnRestore = func(proxy.Snapshot) { p.ClientSide() }
	p = mustPool(t, cfg)
	fail(t, p, "http://user:secret@a.test:1", 3, proxy.AuthFailed)
	clk.Advance(30 * time.Second)
	p.Ejected("a.test:1")
	fail(t, p, "a.test:1", 1, proxy.Carried)
	fail(t, p, "b.test:2", 3, proxy.AuthFailed) // one of two may be ejected: b is ejected
	log := buf.String()
	for _, want := range []string{`"message":"proxy ejected from the rotation"`, `"proxy":"a.test:1"`, `"reason":"consecutive_failures"`,
		`"message":"proxy probe passed: back in the rotation"`, `"cooldown":30000`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "secret") || strings.Contains(log, "user") {
		t.Fatalf("credentials in the log:\n%s", log)
	}
	if len(inHook) != 4 {
		t.Fatalf("OnEject's Stats calls returned %d snapshots, want 2 × 2", len(inHook))
	}
}
