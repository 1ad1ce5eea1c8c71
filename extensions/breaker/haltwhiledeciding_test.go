package breaker_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/gocolly/colly/v2"
)

// allowHeldStore's circuits decide as the in-process ones do, but the first
// Allow after the first waits until the test lets it go: a shared store's round trip, slow
// while its server restarts.
type allowHeldStore struct {
	calls atomic.Int32
	hold  chan struct{}
}

func (s *allowHeldStore) Circuit(key string, st circuit.Settings) (circuit.Circuit, error) {
	c, err := circuit.MemoryStore{}.Circuit(key, st)
	return &allowHeldCircuit{Circuit: c, s: s}, err
}

type allowHeldCircuit struct {
	circuit.Circuit
	s *allowHeldStore
}

func (c *allowHeldCircuit) Allow(clk clock.Clock) (circuit.Ticket, circuit.Transition, error) {
	if c.s.calls.Add(1) == 2 {
		<-c.s.hold
	}
	return c.Circuit.Allow(clk)
}

// A request whose circuit is still deciding when another request's 429
// halts the domain does not leave inside the pause: it waits it out
// (chaos/SEEDS.md, seed 10322171972841010062: with Redis restarting, a
// request reached a store 313 ms into a 1 s Retry-After). The breaker's
// clock is a fake one: the pause ends only when the test moves it.
func TestARequestAllowedDuringAThrottleWaitsOutThePause(t *testing.T) {
	var paused atomic.Bool
	var earlyB atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/a" && !paused.Load():
			paused.Store(true)
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		case r.URL.Path == "/b" && paused.Load() && earlyB.Load() >= 0:
			earlyB.Add(1)
		}
	}))
	defer srv.Close()
	fake := clocktest.NewFake(time.Unix(1_700_000_000, 0))
	st := &allowHeldStore{hold: make(chan struct{})}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Store: st, Clock: fake})
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector(colly.Async(true))
	b.Register(c)
	c.Visit(srv.URL + "/warm") // a success: the domain's room grows past one
	c.Wait()
	c.Visit(srv.URL + "/b") // its Allow waits for st.hold
	for st.calls.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	c.Visit(srv.URL + "/a") // answered 429: the domain halts for 1 s of the fake clock
	if !fake.BlockUntil(1, 10*time.Second) {
		t.Fatal("the 429's re-send never waited for the pause")
	}
	close(st.hold) // /b's circuit decides now, inside the pause
	waited := fake.BlockUntil(2, 5*time.Second)
	if n := earlyB.Load(); n > 0 || !waited {
		t.Fatalf("/b reached the site %d times inside the 1 s pause (waiting for it: %v)", n, waited)
	}
	earlyB.Store(-1) // from here on /b may come
	fake.Advance(2 * time.Second)
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the crawl did not end once the pause was over")
	}
}
