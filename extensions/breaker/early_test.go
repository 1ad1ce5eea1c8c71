package breaker_test

import (
	"github.com/breakwater-crawl/breakwater/observe"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// transitions records every transition a breaker reports.
type transitions struct {
	mu sync.Mutex
	ts []circuit.Transition
}

func (r *transitions) hook(t circuit.Transition) { r.mu.Lock(); r.ts = append(r.ts, t); r.mu.Unlock() }

func (r *transitions) reasons() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, t := range r.ts {
		out = append(out, t.Reason)
	}
	return out
}

func TestSlowCallsTripAFullWindow(t *testing.T) {
	p := breaker.Standard()
	p.Name, p.WindowSize, p.SlowCall, p.SlowCallRate = "slow", 10, time.Second, 0.8
	var tr transitions
	b := newBreaker(t, breaker.Config{Profile: p, Clock: clocktest.NewFake(epoch), OnTransition: tr.hook})
	record := func(n int, lat time.Duration, c circuit.Class) {
		for range n {
			tk, err := b.Allow("slow.test")
			if err != nil {
				t.Fatalf("refused too early: %v", err)
			}
			b.Record(tk, circuit.Result{Class: c, Latency: lat})
		}
	}
	record(3, 100*time.Millisecond, circuit.Success)
	record(6, 2*time.Second, circuit.Success) // 9 outcomes: window not full
	if s := b.State("slow.test"); s != circuit.Closed {
		t.Fatalf("state %s before the window is full", s)
	}
	record(1, 2*time.Second, circuit.Success) // 7 slow of 10: below 0.8
	if s := b.State("slow.test"); s != circuit.Closed {
		t.Fatalf("state %s at 7/10 slow, want closed", s)
	}
	record(1, 2*time.Second, circuit.Success) // 8 of 10
	if s := b.State("slow.test"); s != circuit.Open {
		t.Fatalf("state %s at 8/10 slow calls, want open", s)
	}
	if r := tr.reasons(); len(r) != 1 || r[0] != circuit.ReasonSlowCalls {
		t.Fatalf("transitions %v, want one slow_calls trip", r)
	}
	// The rule is off in the conservative profile.
	b2 := newBreaker(t, breaker.Config{Profile: breaker.Conservative()})
	for range 50 {
		tk, _ := b2.Allow("slow.test")
		b2.Record(tk, circuit.Result{Class: circuit.Success, Latency: time.Minute})
	}
	if s := b2.State("slow.test"); s != circuit.Closed {
		t.Fatalf("conservative profile tripped on slow calls: %s", s)
	}
}

// slopeRun crawls a store on the slope scenario one page at a time and
// returns how many requests it received after it started degrading: from
// the first whose latency climbs (the store counts only the 503s and hangs
// that follow as failing).
func slopeRun(t *testing.T, p breaker.Profile) (sent int, reasons []string, warned bool) {
	store := startStore(t, testserver.Config{Products: 200, Scenario: testserver.Scenario{
		Mode: testserver.Slope, After: 25, Latency: 2 * time.Millisecond, Step: 8 * time.Millisecond,
		FailAfter: 20, Hold: 300 * time.Millisecond}})
	var tr transitions
	var mu sync.Mutex
	b := newBreaker(t, breaker.Config{Profile: p, OnTransition: tr.hook, OnDegrading: func(string, time.Duration, time.Duration) { mu.Lock(); warned = true; mu.Unlock() }})
	c := colly.NewCollector()
	c.SetRequestTimeout(200 * time.Millisecond)
	b.Register(c)
	for i := 1; i <= 200 && b.State(store.Host()) == circuit.Closed; i++ {
		c.Visit(store.ProductURL(i))
	}
	for _, h := range store.Requests() {
		if h.Seq > 25 {
			sent++
		}
	}
	return sent, tr.reasons(), warned
}

func TestLatencySlopeTripsBeforeErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	p := breaker.Standard()
	p.Name, p.TimeoutMultiple, p.SlowCall, p.SlowCallRate = "slope", 0, 0, 0
	p.SlopeMultiple, p.SlopeFloor = 3, 20*time.Millisecond

	errorsOnly := p
	errorsOnly.SlopeMultiple, errorsOnly.SlopeFloor = 0, 0
	sentErr, reasonsErr, _ := slopeRun(t, errorsOnly)

	warnOnly := p
	_, reasonsWarn, warned := slopeRun(t, warnOnly)

	early := p
	early.SlopeTrip = true
	sentEarly, reasonsEarly, _ := slopeRun(t, early)

	t.Logf("slope scenario: error-rate tripping alone sent %d requests into the degradation; the latency-slope trip sent %d", sentErr, sentEarly)
	if len(reasonsErr) == 0 || reasonsErr[0] != circuit.ReasonFailureRate {
		t.Fatalf("error-rate run: transitions %v, want a failure_rate trip", reasonsErr)
	}
	if !warned || len(reasonsWarn) == 0 || reasonsWarn[0] != circuit.ReasonFailureRate {
		t.Fatalf("warn-only run: warned %v, transitions %v; want a degrading warning and still a failure_rate trip", warned, reasonsWarn)
	}
	if len(reasonsEarly) == 0 || reasonsEarly[0] != circuit.ReasonLatencySlope {
		t.Fatalf("slope run: transitions %v, want a latency_slope trip", reasonsEarly)
	}
	if sentEarly >= sentErr || sentErr-sentEarly < 10 || sentErr < 20 {
		t.Fatalf("the early trip sent %d requests into the degradation, error-rate tripping %d: want measurably fewer", sentEarly, sentErr)
	}
}

func TestSlowStoreTripsOnSlowCallsOnly(t *testing.T) {
	run := func(p breaker.Profile) (sent int, st observe.DomainStats) {
		store := startStore(t, testserver.Config{Products: 30, Scenario: testserver.Scenario{Latency: 40 * time.Millisecond}})
		b := newBreaker(t, breaker.Config{Profile: p})
		c := colly.NewCollector()
		b.Register(c)
		for i := 1; i <= 30; i++ {
			c.Visit(store.ProductURL(i))
		}
		return store.Count(), b.Stats()[0]
	}
	p := breaker.Standard()
	p.Name, p.WindowSize, p.SlowCall, p.SlowCallRate, p.TimeoutMultiple = "slow", 10, 20*time.Millisecond, 0.8, 0
	sent, st := run(p)
	if st.State != circuit.Open || sent != 10 || st.Outcomes[circuit.Success.String()] != 10 {
		t.Fatalf("every page 40 ms, slow above 20 ms: %d sent, stats %+v; want a slow_calls trip after a full window of 10", sent, st)
	}
	off := p
	off.SlowCall, off.SlowCallRate = 0, 0
	sent, st = run(off)
	if st.State != circuit.Closed || sent != 30 {
		t.Fatalf("without the rule: %d sent, state %s; want all 30 and closed", sent, st.State)
	}
}
