package breaker_test

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
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

// outageTransport is the user's proxy: after the first up requests it is
// gone, and every connection is refused, whatever the target.
type outageTransport struct {
	mu    sync.Mutex
	up    int
	n     int
	after map[string]int // requests per host once the proxy was gone
}

func (o *outageTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	o.mu.Lock()
	o.n++
	down := o.n > o.up
	if down {
		o.after[r.URL.Host]++
	}
	o.mu.Unlock()
	if down {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestEveryConnectionRefusedIsClientSide(t *testing.T) {
	var log syncBuffer
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{Parallelism: 2}, Logger: zerolog.New(&log)})
	var cfgs []testserver.Config
	for range 6 {
		cfgs = append(cfgs, testserver.Config{Products: 60})
	}
	fleet, err := testserver.StartFleet(cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	proxy := &outageTransport{up: 60, after: map[string]int{}}
	c := colly.NewCollector(colly.Async(true))
	c.WithTransport(proxy)
	b.Register(c)
	for i := 1; i <= 60; i++ {
		for _, s := range fleet.Stores {
			c.Visit(s.ProductURL(i))
		}
	}
	c.Wait()
	if n := strings.Count(log.String(), `"event":"client_side_suspect"`); n != 1 {
		t.Fatalf("%d client_side_suspect events, want exactly 1", n)
	}
	o := outcome.Decide(-1, b)
	if o.State != outcome.Error || o.State.ExitCode() != 1 || !strings.Contains(o.Reason, "client_side_suspect") {
		t.Fatalf("outcome %+v, want error (exit 1) for client_side_suspect, not tripped", o)
	}
	need := breaker.FailuresToTrip(breaker.Standard())
	for host, n := range proxy.after {
		if n > need+2-1 {
			t.Errorf("%s: %d requests after the proxy went, want at most %d", host, n, need+1)
		}
	}
}

// TestHalfTheFleetReallyFailingIsNotClientSide: 4 of 8 stores fail, each
// in its own way (503s, hangs, consent shells, cut bodies), while the others
// serve. That is four bad sites, not a broken client: the run is tripped,
// not error, and the healthy and rate-limited stores get every page.
func TestHalfTheFleetReallyFailingIsNotClientSide(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	var log syncBuffer
	v, err := validate.New(validate.Config{Checks: []validate.Check{validate.MinBytes(1024)}})
	if err != nil {
		t.Fatal(err)
	}
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Validator: v, Pacing: breaker.Pacing{Parallelism: 2}, Logger: zerolog.New(&log)})
	cfgs := []testserver.Config{
		{Products: 40, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 5}},
		{Products: 40, Scenario: testserver.Scenario{Mode: testserver.Hang, After: 5, Hold: 2 * time.Second}},
		{Products: 40, Scenario: testserver.Scenario{Mode: testserver.Empty, After: 5}},
		{Products: 40, Scenario: testserver.Scenario{Mode: testserver.Truncated, After: 5}},
		{Products: 40},
		{Products: 40},
		{Products: 40},
		{Products: 40, Scenario: testserver.Scenario{Mode: testserver.RateLimit, Rate: 40, Burst: 3}},
	}
	fleet, err := testserver.StartFleet(cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	c := colly.NewCollector(colly.Async(true))
	c.SetRequestTimeout(300 * time.Millisecond)
	v.Register(c)
	b.Register(c)
	for i := 1; i <= 40; i++ {
		for _, s := range fleet.Stores {
			c.Visit(s.ProductURL(i))
		}
	}
	c.Wait()
	if strings.Contains(log.String(), "client_side_suspect") {
		t.Fatal("four sites failing in four ways were blamed on the client side")
	}
	if o := outcome.Decide(-1, b); o.State != outcome.Tripped {
		t.Fatalf("outcome %s (%s), want tripped", o.State, o.Reason)
	}
	for _, s := range fleet.Stores[4:] {
		if got := s.CountMode(testserver.Healthy); got != 40 {
			t.Errorf("%s (%s) served %d of 40 pages", s.Host(), s.Scenario().Mode, got)
		}
	}
}

func TestOneDomainTrippingIsTheTarget(t *testing.T) {
	var log syncBuffer
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{Parallelism: 2}, Logger: zerolog.New(&log)})
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
	if o := outcome.Decide(-1, b); o.State != outcome.Tripped {
		t.Fatalf("outcome %+v, want tripped", o)
	}
	for _, s := range fleet.Stores[1:] {
		if s.Count() != 60 {
			t.Fatalf("healthy %s received %d of 60 requests", s.Host(), s.Count())
		}
	}
}

func TestFleetWideBlockedAlarm(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	var log syncBuffer
	// Never held (BlockedAfter -1): the alarm is about 403s answered
	// across the fleet over time.
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Clock: clk, Logger: zerolog.New(&log), BlockedAfter: -1})
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
		if st := b.State(s.Host()); st != circuit.Closed {
			t.Fatalf("%s is %s: 403s must never trip", s.Host(), st)
		}
	}
}

// Three stores hang while a fourth, small and healthy, is still serving
// pages: the client plainly works. By the time the hanging stores have
// timed out often enough to trip, the healthy one is done and idle, so
// "no success since the first trip" holds; but a success after the first
// of the failures that tripped them does not fit a broken client. Found
// by the chaos suite (7280687474409122758): the run ended as a
// client-side error instead of tripped.
func TestHangingSitesWhileAnotherSucceedsAreNotClientSide(t *testing.T) {
	var log syncBuffer
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{Parallelism: 2}, Logger: zerolog.New(&log)})
	hang := testserver.Scenario{Mode: testserver.Hang, After: 2, Hold: 5 * time.Second}
	degrade := testserver.Scenario{Mode: testserver.Degrade, After: 2}
	cfgs := []testserver.Config{
		{Products: 30, Scenario: hang}, {Products: 30, Scenario: hang}, {Products: 30, Scenario: hang},
		{Products: 4},
		{Products: 30, Scenario: degrade}, {Products: 30, Scenario: degrade},
	}
	fleet, err := testserver.StartFleet(cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	c := colly.NewCollector(colly.Async(true))
	c.SetRequestTimeout(150 * time.Millisecond)
	b.Register(c)
	for i := 1; i <= 30; i++ {
		for _, s := range fleet.Stores {
			if i <= s.Catalog().Len() {
				c.Visit(s.ProductURL(i))
			}
		}
	}
	c.Wait()
	if got := fleet.Stores[3].CountMode(testserver.Healthy); got != 4 {
		t.Fatalf("the healthy store served %d of 4 pages: the test proves nothing", got)
	}
	if strings.Contains(log.String(), `"event":"client_side_suspect"`) {
		t.Fatal("three hanging sites, while another site was answering, were blamed on the client side")
	}
	if o := outcome.Decide(-1, b); o.State != outcome.Tripped {
		t.Fatalf("outcome %s (%s), want tripped", o.State, o.Reason)
	}
}
