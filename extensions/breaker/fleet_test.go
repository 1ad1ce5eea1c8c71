package breaker_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// syncBuffer is a log sink safe for the collector's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// crawlFleet crawls every store of cfgs, pages pages each, with b.
func crawlFleet(t *testing.T, b *breaker.Breaker, pages int, cfgs ...testserver.Config) *testserver.Fleet {
	t.Helper()
	fleet, err := testserver.StartFleet(cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	c := colly.NewCollector(colly.Async(true))
	b.Register(c)
	for i := 1; i <= pages; i++ {
		for _, s := range fleet.Stores {
			c.Visit(s.ProductURL(i))
		}
	}
	c.Wait()
	return fleet
}

func TestMostDomainsTrippingAtOnceIsClientSide(t *testing.T) {
	var log syncBuffer
	b := newBreaker(t, breaker.Standard, breaker.WithPacing(breaker.Pacing{Parallelism: 2}),
		breaker.WithLogger(zerolog.New(&log)))
	var cfgs []testserver.Config
	for i := range 6 {
		sc := testserver.Scenario{Mode: testserver.Degrade, After: 10}
		if i >= 4 {
			sc = testserver.Scenario{} // two stay healthy
		}
		cfgs = append(cfgs, testserver.Config{Products: 60, Scenario: sc})
	}
	fleet := crawlFleet(t, b, 60, cfgs...)

	if n := strings.Count(log.String(), `"event":"client_side_suspect"`); n != 1 {
		t.Fatalf("%d client_side_suspect events, want exactly 1", n)
	}
	o := outcome.Decide(-1, nil, b)
	if o.State != outcome.Error || o.ExitCode() != 1 || !strings.Contains(o.Reason, "client_side_suspect") {
		t.Fatalf("outcome %+v, want error (exit 1) for client_side_suspect, not tripped", o)
	}
	// Every domain was paused together, the healthy ones too: the healthy
	// stores stopped receiving requests instead of each target being blamed.
	for _, s := range fleet.Stores[4:] {
		if st := b.State(s.Host()); st != breaker.Open {
			t.Fatalf("healthy %s is %s after the fleet-wide pause, want open (paused)", s.Host(), st)
		}
		if s.Count() >= 60 {
			t.Fatalf("healthy %s received all %d requests: the pause did not hold", s.Host(), s.Count())
		}
	}
}

func TestOneDomainTrippingIsTheTarget(t *testing.T) {
	var log syncBuffer
	b := newBreaker(t, breaker.Standard, breaker.WithPacing(breaker.Pacing{Parallelism: 2}), breaker.WithLogger(zerolog.New(&log)))
	var cfgs []testserver.Config
	for i := range 6 {
		sc := testserver.Scenario{}
		if i == 0 {
			sc = testserver.Scenario{Mode: testserver.Degrade, After: 10}
		}
		cfgs = append(cfgs, testserver.Config{Products: 60, Scenario: sc})
	}
	fleet := crawlFleet(t, b, 60, cfgs...)
	if strings.Contains(log.String(), "client_side_suspect") {
		t.Fatal("one failing domain out of six was blamed on the client side")
	}
	if o := outcome.Decide(-1, nil, b); o.State != outcome.Tripped {
		t.Fatalf("outcome %+v, want tripped", o)
	}
	for _, s := range fleet.Stores[1:] {
		if s.Count() != 60 {
			t.Fatalf("healthy %s received %d of 60 requests", s.Host(), s.Count())
		}
	}
}

func TestFleetWideBlockedAlarm(t *testing.T) {
	clk := clock.NewFake(epoch)
	var log syncBuffer
	b := newBreaker(t, breaker.Standard, breaker.WithClock(clk), breaker.WithLogger(zerolog.New(&log)))
	fleet, err := testserver.StartFleet(
		testserver.Config{Products: 40, Scenario: testserver.Scenario{Mode: testserver.Blocked}},
		testserver.Config{Products: 40, Scenario: testserver.Scenario{Mode: testserver.Blocked}},
		testserver.Config{Products: 40},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	c := colly.NewCollector()
	b.Register(c)
	crawl := func(from, to int) {
		for i := from; i <= to; i++ {
			for _, s := range fleet.Stores {
				c.Visit(s.ProductURL(i))
			}
		}
	}
	crawl(1, 20)
	clk.Advance(2 * time.Second) // the fleet is looked at once a second at most
	crawl(21, 40)
	if n := strings.Count(log.String(), `"event":"blocked_fleet"`); n != 1 {
		t.Fatalf("%d blocked_fleet alarms, want 1 (2 of 3 domains answer 403)", n)
	}
	if strings.Contains(log.String(), `"event":"throttled_fleet"`) || strings.Contains(log.String(), "client_side_suspect") {
		t.Fatal("403s raised the wrong alarm")
	}
	for _, s := range fleet.Stores {
		if st := b.State(s.Host()); st != breaker.Closed {
			t.Fatalf("%s is %s: 403s must never trip", s.Host(), st)
		}
	}
}
