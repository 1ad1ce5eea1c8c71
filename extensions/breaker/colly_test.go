package breaker_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func startStore(t *testing.T, cfg testserver.Config) *testserver.Store {
	t.Helper()
	s, err := testserver.Start(cfg)
	if err != nil {
		t.Fatalf("start test store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newBreaker(t *testing.T, c breaker.Config) *breaker.Breaker {
	t.Helper()
	b, err := breaker.New(c)
	if err != nil {
		t.Fatalf("breaker.New: %v", err)
	}
	return b
}

// refusals collects what OnRefused hands over.
type refusals struct {
	mu   sync.Mutex
	urls []string
	errs []*circuit.OpenError
}

func (r *refusals) hook(req *colly.Request, err *circuit.OpenError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.urls = append(r.urls, req.URL.String())
	r.errs = append(r.errs, err)
}

func (r *refusals) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.urls)
}

func TestSeedTimelineOneRequestAtATime(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 300, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}})
	clk := clocktest.NewFake(epoch)
	var ref refusals
	var trans []circuit.Transition
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Clock: clk, OnRefused: ref.hook, OnTransition: func(tr circuit.Transition) { trans = append(trans, tr) }})
	c := colly.NewCollector()
	b.Register(c)

	for i := 1; i <= 60; i++ {
		c.Visit(store.ProductURL(i))
	}
	if got := store.Count(); got != 40 {
		t.Fatalf("store received %d requests, want exactly 40 (30 healthy + 10 failures trip a standard window)", got)
	}
	if got := store.SentAfterFailing(); got != 10 {
		t.Fatalf("requests sent into the degradation: %d, want 10", got)
	}
	if ref.len() != 20 || ref.urls[0] != store.ProductURL(41) {
		t.Fatalf("refused %d requests starting with %v; want 20 starting with request 41", ref.len(), ref.urls[:min(1, len(ref.urls))])
	}
	if want := epoch.Add(time.Minute); !ref.errs[0].RetryAt.Equal(want) || ref.errs[0].Key != store.Host() {
		t.Fatalf("refusal %+v, want domain %s retry at %v", ref.errs[0], store.Host(), want)
	}
	if s := b.State(store.Host()); s != circuit.Open {
		t.Fatalf("state %s, want open", s)
	}

	// The site recovers; after the cooldown two probes close the circuit.
	store.SetScenario(testserver.Scenario{Mode: testserver.Healthy})
	clk.Advance(breaker.Standard().Cooldown)
	for i := 61; i <= 70; i++ {
		c.Visit(store.ProductURL(i))
	}
	if got := store.Count(); got != 50 {
		t.Fatalf("after recovery the store received %d requests, want 50", got)
	}
	if s := b.State(store.Host()); s != circuit.Closed {
		t.Fatalf("state after recovery %s, want closed", s)
	}
	want := []circuit.State{circuit.Open, circuit.HalfOpen, circuit.Closed}
	if len(trans) != len(want) {
		t.Fatalf("%d transitions, want %d", len(trans), len(want))
	}
	for i, tr := range trans {
		if tr.To != want[i] {
			t.Fatalf("transition %d went to %s, want %s", i, tr.To, want[i])
		}
	}
	st := b.Stats()[0]
	if st.Outcomes[circuit.Success.String()] != 40 || st.Outcomes[circuit.Degraded.String()] != 10 || st.Refused != 20 || st.Trips != 1 {
		t.Fatalf("stats %+v: want 40 successes, 10 degraded, 20 refused, 1 trip", st)
	}
}

func TestSeedTimelineQueuedUpFrontWithParallelism(t *testing.T) {
	for _, p := range []int{1, 2, 4} {
		store := startStore(t, testserver.Config{Products: 300, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}})
		var ref refusals
		// The LimitRule frees its slot when the body is read, a moment
		// before the outcome reaches the circuit; the pace frees its slot
		// only after, which is what makes P − 1 a bound.
		b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), OnRefused: ref.hook, Pacing: breaker.Pacing{Parallelism: p}})
		c := colly.NewCollector(colly.Async(true))
		if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: p}); err != nil {
			t.Fatal(err)
		}
		b.Register(c)
		for i := 1; i <= 300; i++ {
			c.Visit(store.ProductURL(i))
		}
		c.Wait()
		got := store.Count()
		if got < 40 || got > 40+p-1 {
			t.Errorf("parallelism %d: store received %d requests, want 40..%d", p, got, 40+p-1)
		}
		if got+ref.len() != 300 {
			t.Errorf("parallelism %d: %d sent + %d refused != 300 queued: a URL went missing", p, got, ref.len())
		}
		t.Logf("parallelism %d: %d requests reached the store, %d after it started failing, %d refused", p, got, store.SentAfterFailing(), ref.len())
	}
}

func TestWorksWithCollyQueue(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 200, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}})
	var ref refusals
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), OnRefused: ref.hook})
	c := colly.NewCollector()
	b.Register(c)
	q, err := queue.New(2, &queue.InMemoryQueueStorage{MaxSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 200; i++ {
		q.AddURL(store.ProductURL(i))
	}
	if err := q.Run(c); err != nil {
		t.Fatal(err)
	}
	if got := store.Count(); got < 40 || got > 41 {
		t.Fatalf("store received %d requests through a 2-thread queue, want 40..41", got)
	}
	if store.Count()+ref.len() != 200 {
		t.Fatalf("%d sent + %d refused != 200 queued", store.Count(), ref.len())
	}
}

func TestOneFailingDomainLeavesOthersFlowing(t *testing.T) {
	fleet, err := testserver.StartFleet(
		testserver.Config{Products: 100, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 5}},
		testserver.Config{Products: 100},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	bad, good := fleet.Stores[0], fleet.Stores[1]
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
	c := colly.NewCollector(colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})
	b.Register(c)
	var mu sync.Mutex
	scraped := 0
	c.OnScraped(func(r *colly.Response) {
		if r.Request.URL.Host == good.Host() {
			mu.Lock()
			scraped++
			mu.Unlock()
		}
	})
	for i := 1; i <= 100; i++ {
		c.Visit(bad.ProductURL(i))
		c.Visit(good.ProductURL(i))
	}
	c.Wait()
	if b.State(bad.Host()) != circuit.Open {
		t.Fatalf("degrading domain is %s, want open", b.State(bad.Host()))
	}
	if b.State(good.Host()) != circuit.Closed || scraped != 100 || good.Count() != 100 {
		t.Fatalf("healthy domain: state %s, %d pages scraped, %d requests; want closed, 100, 100", b.State(good.Host()), scraped, good.Count())
	}
	if bad.Count() > 20+3 {
		t.Fatalf("degrading domain received %d requests, want at most a window plus those in flight", bad.Count())
	}
}

func TestThrottleStormHonoursRetryAfterAndNeverTrips(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	store := startStore(t, testserver.Config{Products: 50, Now: clk.Now,
		Scenario: testserver.Scenario{Mode: testserver.Throttle, After: 5, RetryAfter: 2 * time.Second, RecoverAfter: 30 * time.Second}})
	var (
		mu       sync.Mutex
		outcomes []observe.Attempt
	)
	b := newBreaker(t, breaker.WithThrottleRetries(breaker.Config{Profile: breaker.Aggressive(), Clock: clk, OnAttempt: func(a observe.Attempt) { mu.Lock(); outcomes = append(outcomes, a); mu.Unlock() }}, 100))
	c := colly.NewCollector()
	b.Register(c)
	stop := make(chan struct{})
	go clk.Drive(stop)
	for i := 1; i <= 50; i++ {
		c.Visit(store.ProductURL(i))
	}
	close(stop)

	hits := store.Requests()
	throttled := 0
	for i, h := range hits {
		if h.Status != 429 {
			continue
		}
		throttled++
		if i+1 < len(hits) && hits[i+1].Time.Before(h.Time.Add(2*time.Second)) {
			t.Fatalf("request %d was sent %v after a 429 asking for 2s", hits[i+1].Seq, hits[i+1].Time.Sub(h.Time))
		}
	}
	if throttled == 0 {
		t.Fatal("the store never throttled: the test proves nothing")
	}
	if s := b.State(store.Host()); s != circuit.Closed {
		t.Fatalf("state %s after a 429 storm, want closed", s)
	}
	for i := 1; i <= 50; i++ {
		if n := store.CountPath(testserver.ProductPath(i)); n < 1 {
			t.Fatalf("product %d never fetched: a throttled URL was lost", i)
		}
	}
	st := b.Stats()[0]
	if st.Outcomes[circuit.Throttled.String()] != int64(throttled) || st.Outcomes[circuit.Success.String()] != 50 || st.Pace.Pauses == 0 {
		t.Fatalf("stats %+v: want %d throttled, 50 successes, pauses > 0", st, throttled)
	}
	retrying := 0
	for _, a := range outcomes {
		if a.Retrying {
			retrying++
		}
	}
	if retrying != throttled {
		t.Fatalf("%d outcomes marked Retrying, want one per 429 (%d)", retrying, throttled)
	}
}

func TestBlockedAndGoneNeverTrip(t *testing.T) {
	for _, tt := range []struct {
		mode  testserver.Mode
		class circuit.Class
	}{{testserver.Blocked, circuit.Blocked}, {testserver.Gone, circuit.Gone}} {
		store := startStore(t, testserver.Config{Products: 100, Scenario: testserver.Scenario{Mode: tt.mode}})
		// BlockedAfter -1: never held, so that every 403 is answered and
		// seen not to count (the hold: TestABlockedStoreIsHeldAfterBlockedAfterAnswers).
		b := newBreaker(t, breaker.WithAlarmAfter(breaker.Config{Profile: breaker.Conservative(), BlockedAfter: -1}, 5))
		c := colly.NewCollector()
		b.Register(c)
		for i := 1; i <= 100; i++ {
			c.Visit(store.ProductURL(i))
		}
		if store.Count() != 100 || b.State(store.Host()) != circuit.Closed {
			t.Errorf("%s: %d requests, state %s; want all 100 sent and closed", tt.mode, store.Count(), b.State(store.Host()))
		}
		if n := b.Stats()[0].Outcomes[tt.class.String()]; n != 100 {
			t.Errorf("%s: counted %d as %s, want 100", tt.mode, n, tt.class)
		}
	}
}

func TestRefusedRequestsNeverReachTheNetwork(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 100, Scenario: testserver.Scenario{Mode: testserver.Degrade}})
	var ref refusals
	p := breaker.Standard()
	p.ConsecutiveFailures = 3
	b := newBreaker(t, breaker.Config{Profile: p, OnRefused: ref.hook})
	c := colly.NewCollector()
	b.Register(c)
	var errs []error
	c.OnError(func(r *colly.Response, err error) { errs = append(errs, err) })
	for i := 1; i <= 100; i++ {
		c.Visit(store.ProductURL(i))
	}
	if store.Count() != 3 || ref.len() != 97 {
		t.Fatalf("%d requests reached the store and %d were refused; want 3 and 97", store.Count(), ref.len())
	}
	for _, e := range ref.errs {
		if !errors.Is(e, breaker.ErrOpen) || e.State != circuit.Open {
			t.Fatalf("refusal %v is not an open-circuit error", e)
		}
	}
	if st := b.Stats()[0]; st.Outcomes[circuit.Degraded.String()] != 3 || st.Refused != 97 {
		t.Fatalf("stats %+v: refusals must not count as failures", st)
	}
}
