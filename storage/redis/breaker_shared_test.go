package redis_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	bwclock "github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	goredis "github.com/redis/go-redis/v9"
)

const domain = "shop.test:8080"

// workers returns n circuits for the same domain of the same crawl, each
// on a client (and so connections) of its own, as n worker processes have.
func workers(t *testing.T, n int, p breaker.Profile, c redis.Config) ([]circuit.Circuit, *goredis.Client, *redis.BreakerStore) {
	t.Helper()
	first, prefix := redistest.New(t)
	if c.Namespace == "" {
		c.Namespace = prefix
	}
	var out []circuit.Circuit
	var store0 *redis.BreakerStore
	for i := range n {
		client := first
		if i > 0 {
			client = redistest.Client(t)
		}
		bs, err := redis.NewBreakerStore(client, "crawl-1", c)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			store0 = bs.(*redis.BreakerStore)
		}
		c, err := bs.Circuit(domain, p.Settings())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out, first, store0
}

func mustAllow(t *testing.T, c circuit.Circuit, clk bwclock.Clock) (circuit.Ticket, circuit.Transition) {
	t.Helper()
	p, tr, err := c.Allow(clk)
	if err != nil {
		t.Fatalf("Allow: %v", err)
	}
	return p, tr
}

func mustRecord(t *testing.T, c circuit.Circuit, clk bwclock.Clock, p circuit.Ticket, class circuit.Class) circuit.Transition {
	t.Helper()
	tr, err := c.Record(clk, p, circuit.Result{Class: class, Latency: 30 * time.Millisecond})
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	return tr
}

func refusal(t *testing.T, c circuit.Circuit, clk bwclock.Clock) *circuit.OpenError {
	t.Helper()
	_, _, err := c.Allow(clk)
	var open *circuit.OpenError
	if !errors.As(err, &open) {
		t.Fatalf("Allow: %v, want a refusal", err)
	}
	return open
}

// tripWith opens the circuit through c with consecutive failures.
func tripWith(t *testing.T, c circuit.Circuit, clk bwclock.Clock, p breaker.Profile) circuit.Transition {
	t.Helper()
	for i := 0; i < 10*p.WindowSize; i++ {
		pm, _ := mustAllow(t, c, clk)
		if tr := mustRecord(t, c, clk, pm, circuit.Degraded); tr.To == circuit.Open {
			return tr
		}
	}
	t.Fatal("circuit never tripped")
	return circuit.Transition{}
}

func TestTripByOneWorkerRefusesTheOthersAtOnce(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	ws, _, _ := workers(t, 3, breaker.Standard(), redis.Config{})
	// Workers 1 and 2 have requests in flight when worker 0 trips.
	var late []circuit.Ticket
	for _, w := range ws[1:] {
		for range 3 {
			p, _ := mustAllow(t, w, clk)
			late = append(late, p)
		}
	}
	tr := tripWith(t, ws[0], clk, breaker.Standard())
	if need := breaker.Standard().Settings().FailuresToTrip(); tr.Reason != circuit.ReasonFailureRate || tr.Trips != 1 || len(tr.Window) != need {
		t.Fatalf("trip %+v, want failure_rate after %d failures, trip 1", tr, need)
	}
	for i, w := range ws[1:] {
		e := refusal(t, w, clk)
		if e.State != circuit.Open || !e.RetryAt.Equal(tr.RetryAt) {
			t.Fatalf("worker %d: refusal %+v, want open until %v", i+1, e, tr.RetryAt)
		}
	}
	// Their in-flight results land after the trip: the same event, ignored.
	for i, p := range late {
		if tr := mustRecord(t, ws[1+i%2], clk, p, circuit.Degraded); tr.From != tr.To {
			t.Fatalf("a result from before the trip moved the circuit: %+v", tr)
		}
	}
	for i, w := range ws {
		s, err := w.Snapshot(clk)
		if err != nil {
			t.Fatal(err)
		}
		if s.State != circuit.Open || s.Trips != 1 || !s.RetryAt.Equal(tr.RetryAt) {
			t.Fatalf("worker %d sees %+v, want open, 1 trip, until %v", i, s, tr.RetryAt)
		}
	}
}

func TestHalfOpenProbesAreLimitedAcrossWorkers(t *testing.T) {
	for _, p := range []breaker.Profile{breaker.Conservative(), breaker.Standard(), breaker.Aggressive()} {
		t.Run(p.Name, func(t *testing.T) {
			clk := clocktest.NewFake(epoch)
			ws, _, _ := workers(t, 3, p, redis.Config{})
			tripWith(t, ws[0], clk, p)
			clk.Advance(p.Cooldown)
			// Every worker races 30 goroutines for the probes.
			var mu sync.Mutex
			granted, refused, halfOpened := 0, 0, 0
			var wg sync.WaitGroup
			start := make(chan struct{})
			for _, w := range ws {
				for range 30 {
					wg.Go(func() {
						<-start
						_, tr, err := w.Allow(clk)
						mu.Lock()
						defer mu.Unlock()
						var open *circuit.OpenError
						switch {
						case err == nil:
							granted++
						case errors.As(err, &open) && open.State == circuit.HalfOpen:
							refused++
						default:
							t.Errorf("Allow: %v", err)
						}
						if tr.From != tr.To {
							halfOpened++
						}
					})
				}
			}
			close(start)
			wg.Wait()
			if granted != p.HalfOpenProbes || refused != 90-p.HalfOpenProbes {
				t.Fatalf("90 Allows from 3 workers: %d granted, %d refused; want %d probes in total", granted, refused, p.HalfOpenProbes)
			}
			if halfOpened != 1 {
				t.Fatalf("%d workers report open → half-open, want exactly 1", halfOpened)
			}
			for i, w := range ws {
				if s, _ := w.Snapshot(clk); s.State != circuit.HalfOpen || s.ProbesInFlight != p.HalfOpenProbes {
					t.Fatalf("worker %d sees %+v, want half-open with %d probes in flight", i, s, p.HalfOpenProbes)
				}
			}
		})
	}
}

func TestProbesPassingOnDifferentWorkersCloseTheCircuit(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	ws, _, _ := workers(t, 2, breaker.Standard(), redis.Config{}) // 2 probes
	tripWith(t, ws[0], clk, breaker.Standard())
	clk.Advance(breaker.Standard().Cooldown)
	p0, _ := mustAllow(t, ws[0], clk)
	p1, _ := mustAllow(t, ws[1], clk)
	if !p0.Probe || !p1.Probe {
		t.Fatal("permits in half-open are not probes")
	}
	if tr := mustRecord(t, ws[1], clk, p1, circuit.Success); tr.From != tr.To {
		t.Fatalf("one probe of two passing changed the state: %+v", tr)
	}
	tr := mustRecord(t, ws[0], clk, p0, circuit.Success)
	if tr.To != circuit.Closed || tr.Reason != circuit.ReasonProbesPassed {
		t.Fatalf("second probe passing: %+v, want half-open → closed (probes_passed)", tr)
	}
	if p, _ := mustAllow(t, ws[1], clk); p.Probe {
		t.Fatal("worker 1 still gets probes after the circuit closed")
	}
}

// A worker that takes a probe and dies must not keep the domain half-open
// with no slot free forever: its probe's lease runs out.
func TestProbeLeaseFreesTheSlotOfADeadWorker(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	p := breaker.Conservative() // 1 probe
	ws, _, _ := workers(t, 2, p, redis.Config{ProbeLease: 30 * time.Second})
	tripWith(t, ws[0], clk, p)
	clk.Advance(p.Cooldown)
	mustAllow(t, ws[0], clk) // worker 0 takes the probe and dies
	clk.Advance(30*time.Second - time.Millisecond)
	if e := refusal(t, ws[1], clk); e.State != circuit.HalfOpen {
		t.Fatalf("refusal %+v, want half-open (the probe slot is taken)", e)
	}
	clk.Advance(time.Millisecond)
	pm, _ := mustAllow(t, ws[1], clk)
	if !pm.Probe {
		t.Fatal("the freed slot's permit is not a probe")
	}
	if tr := mustRecord(t, ws[1], clk, pm, circuit.Success); tr.To != circuit.Closed {
		t.Fatalf("the new probe passing: %+v, want closed", tr)
	}
}

func TestCircuitKeysExpireWhenIdleButNeverWhileOpen(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	p := breaker.Conservative() // 300 s cooldown
	ws, client, bs := workers(t, 1, p, redis.Config{Retention: time.Minute})
	c := ws[0]
	ctx := context.Background()
	keys := bs.Keys(domain)
	pm, _ := mustAllow(t, c, clk)
	mustRecord(t, c, clk, pm, circuit.Success)
	for _, k := range keys[:2] { // state and window exist now
		ttl, err := client.PTTL(ctx, k).Result()
		if err != nil || ttl <= 50*time.Second || ttl > time.Minute {
			t.Fatalf("closed circuit key %s: TTL %v (%v), want about the 1m retention", k, ttl, err)
		}
	}
	tripWith(t, c, clk, p)
	ttl, err := client.PTTL(ctx, keys[0]).Result()
	if err != nil || ttl <= p.Cooldown || ttl > p.Cooldown+time.Minute {
		t.Fatalf("open circuit: TTL %v (%v), want the 300s cooldown plus the 1m retention", ttl, err)
	}
	// A closed Allow writes only the ticket counter: for a domain never
	// seen, a state key that expires after the retention, nothing else.
	other, err := bs.Circuit("never-recorded.test", p.Settings())
	if err != nil {
		t.Fatal(err)
	}
	mustAllow(t, other, clk)
	okeys := bs.Keys("never-recorded.test")
	if n, _ := client.Exists(ctx, okeys[1:]...).Result(); n != 0 {
		t.Fatalf("an Allow on a closed circuit wrote %d window or probe keys", n)
	}
	if ttl, err := client.PTTL(ctx, okeys[0]).Result(); err != nil || ttl <= 50*time.Second || ttl > time.Minute {
		t.Fatalf("the state key a closed Allow made: TTL %v (%v), want about the 1m retention", ttl, err)
	}
}

func TestRestoreOpenIsSeenByEveryWorker(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	ws, _, _ := workers(t, 2, breaker.Standard(), redis.Config{})
	until := epoch.Add(10 * time.Minute)
	tr, err := ws[0].RestoreOpen(clk, until, 4)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Reason != circuit.ReasonRestored || tr.Trips != 4 || !tr.RetryAt.Equal(until) {
		t.Fatalf("restore: %+v, want restored, 4 trips, until %v", tr, until)
	}
	if e := refusal(t, ws[1], clk); !e.RetryAt.Equal(until) {
		t.Fatalf("worker 1 refusal %+v, want open until %v", e, until)
	}
	// A second worker restoring the same checkpoint changes nothing.
	if tr, err := ws[1].RestoreOpen(clk, until, 4); err != nil || tr.From != tr.To {
		t.Fatalf("second restore: %+v, %v; want no change", tr, err)
	}
}

func TestCrawlsDoNotShareCircuits(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	client, prefix := redistest.New(t)
	var cs []circuit.Circuit
	for _, crawl := range []string{"crawl-a", "crawl-b"} {
		bs, err := redis.NewBreakerStore(client, crawl, redis.Config{Namespace: prefix})
		if err != nil {
			t.Fatal(err)
		}
		c, err := bs.Circuit(domain, breaker.Standard().Settings())
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	tripWith(t, cs[0], clk, breaker.Standard())
	if p, _ := mustAllow(t, cs[1], clk); p.Probe {
		t.Fatal("the other crawl's circuit is not closed")
	}
}

// Each decision is one round trip; a Record that cannot change anything is
// none.
func TestEveryDecisionIsOneRoundTrip(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	client, prefix := redistest.New(t)
	rt := &roundTrips{}
	client.AddHook(rt)
	bs, err := redis.NewBreakerStore(client, "crawl-1", redis.Config{Namespace: prefix})
	if err != nil {
		t.Fatal(err)
	}
	c, err := bs.Circuit(domain, breaker.Standard().Settings())
	if err != nil {
		t.Fatal(err)
	}
	// Load the scripts first: after that EVALSHA never falls back to EVAL.
	pm, _ := mustAllow(t, c, clk)
	mustRecord(t, c, clk, pm, circuit.Success)
	tripWith(t, c, clk, breaker.Standard())
	// Open until later than this: changes nothing, loads the script.
	if _, err := c.HoldOpen(clk, clk.Now().Add(time.Second), circuit.ReasonSlowCalls); err != nil {
		t.Fatal(err)
	}
	clk.Advance(breaker.Standard().Cooldown)
	if _, err := c.Snapshot(clk); err != nil {
		t.Fatal(err)
	}
	first, _ := mustAllow(t, c, clk) // open → half-open
	measure := func(name string, want int64, f func()) {
		t.Helper()
		before := rt.n.Load()
		f()
		if got := rt.n.Load() - before; got != want {
			t.Errorf("%s: %d round trips, want %d", name, got, want)
		}
	}
	var probe circuit.Ticket
	measure("Allow (half-open probe)", 1, func() { probe, _ = mustAllow(t, c, clk) })
	measure("Allow (refused)", 1, func() { refusal(t, c, clk) })
	measure("Record (probe, success)", 1, func() { mustRecord(t, c, clk, probe, circuit.Success) })
	if tr := mustRecord(t, c, clk, first, circuit.Success); tr.To != circuit.Closed {
		t.Fatalf("both probes passed: %+v, want closed", tr)
	}
	var closed circuit.Ticket
	measure("Allow (closed)", 1, func() { closed, _ = mustAllow(t, c, clk) })
	measure("Record (closed, failure)", 1, func() { mustRecord(t, c, clk, closed, circuit.Degraded) })
	measure("Record (closed, gone)", 0, func() { mustRecord(t, c, clk, closed, circuit.Gone) })
	measure("Snapshot", 1, func() { _, _ = c.Snapshot(clk) })
	measure("HoldOpen", 1, func() {
		_, _ = c.HoldOpen(clk, clk.Now().Add(time.Minute), circuit.ReasonSlowCalls)
	})
}

// TestRetryAfterGivenToOneWorkerHoldsThemAll: a worker told Retry-After
// pauses the domain for every worker: the others are refused until then
// (the circuit stays closed), and allowed after.
func TestRetryAfterGivenToOneWorkerHoldsThemAll(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	ws, _, _ := workers(t, 2, breaker.Standard(), redis.Config{})
	until := epoch.Add(3 * time.Second)
	p, ok := ws[0].(interface {
		Pause(bwclock.Clock, time.Time) error
	})
	if !ok {
		t.Fatal("the shared circuit cannot share a pause")
	}
	if err := p.Pause(clk, until); err != nil {
		t.Fatal(err)
	}
	e := refusal(t, ws[1], clk)
	if e.State != circuit.Closed || !e.RetryAt.Equal(until) {
		t.Fatalf("the other worker's refusal %+v, want closed-but-paused until %v", e, until)
	}
	clk.Advance(3 * time.Second)
	mustAllow(t, ws[1], clk)
	if s, err := ws[1].Snapshot(clk); err != nil || s.State != circuit.Closed || s.Trips != 0 {
		t.Fatalf("after the pause: %+v, %v; want closed, never tripped", s, err)
	}
}
