package redis_test

import (
	"errors"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	bwclock "github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/rs/zerolog"
)

// waitAllowed calls Allow until Redis answers again, for at most 10 s.
func waitAllowed(t *testing.T, c circuit.Circuit) (circuit.Ticket, time.Duration) {
	t.Helper()
	began := time.Now()
	for time.Since(began) < 10*time.Second {
		p, _, err := c.Allow(bwclock.System)
		if err == nil && p.Gen < 1<<63 {
			return p, time.Since(began)
		}
		if err != nil && !errors.Is(err, redis.ErrUnavailable) {
			var open *circuit.OpenError
			if !errors.As(err, &open) {
				t.Fatalf("Allow while Redis comes back: %v", err)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("Redis never answered again within 10s")
	return circuit.Ticket{}, 0
}

func linkEvents(t *testing.T, buf *logBuffer) []string {
	t.Helper()
	var out []string
	for _, e := range buf.events(t) {
		if ev, _ := e["event"].(string); ev == "redis_unavailable" || ev == "redis_recovered" {
			out = append(out, ev)
		}
	}
	return out
}

func TestBreakerFailsClosedWhileRedisIsDownAndResumesWhenItIsBack(t *testing.T) {
	srv := startOwnServer(t)
	client := srv.client()
	rt := &roundTrips{}
	client.AddHook(rt)
	var buf logBuffer
	bs, err := redis.NewBreakerStore(client, "crawl-1", redis.Config{Logger: zerolog.New(&buf), ReconnectBase: 40 * time.Millisecond, ReconnectCap: 160 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p := breaker.Conservative()
	tripped, err := bs.Circuit("down.test", p.Settings())
	if err != nil {
		t.Fatal(err)
	}
	healthy, err := bs.Circuit("up.test", p.Settings())
	if err != nil {
		t.Fatal(err)
	}
	tr := tripWith(t, tripped, bwclock.System, p)
	mustAllow(t, healthy, bwclock.System)

	srv.stop()
	began := time.Now()
	before := rt.n.Load()
	calls := 0
	var last error
	for time.Since(began) < 300*time.Millisecond {
		_, _, err := healthy.Allow(bwclock.System)
		last = err
		calls++
		var unavailable *redis.UnavailableError
		var open *circuit.OpenError
		if !errors.As(err, &unavailable) || !errors.Is(err, redis.ErrUnavailable) || !errors.Is(err, breaker.ErrOpen) || !errors.As(err, &open) {
			t.Fatalf("Allow with Redis down: %v; want an *UnavailableError that matches ErrUnavailable and converts to a *circuit.OpenError", err)
		}
		if now := time.Now(); open.Key != "up.test" || !open.RetryAt.After(now.Add(-time.Millisecond)) {
			t.Fatalf("refusal for %s until %s at %s: want the domain, open until the next try", open.Key,
				open.RetryAt.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
		}
		time.Sleep(time.Millisecond)
	}
	tries := rt.n.Load() - before
	t.Logf("Redis down: %d Allows in 300ms made %d tries (backoff 40ms..160ms); the refusal: %v", calls, tries, last)
	if tries < 2 || tries > 8 {
		t.Errorf("%d tries to reach Redis in 300ms, want a few (one per backoff), not one per call (%d)", tries, calls)
	}
	if _, err := healthy.Record(bwclock.System, circuit.Ticket{}, circuit.Result{Class: circuit.Success}); !errors.Is(err, redis.ErrUnavailable) {
		t.Errorf("Record with Redis down: %v, want ErrUnavailable", err)
	}

	srv.start()
	_, waited := waitAllowed(t, healthy)
	t.Logf("Redis back: the first Allow got through after %v", waited)
	// The shared state survived the outage: the tripped domain is still open.
	if e := refusal(t, tripped, bwclock.System); e.State != circuit.Open || !e.RetryAt.Equal(tr.RetryAt) {
		t.Fatalf("after the restart the tripped domain answers %+v, want open until %v", e, tr.RetryAt)
	}
	if got := linkEvents(t, &buf); len(got) != 2 || got[0] != "redis_unavailable" || got[1] != "redis_recovered" {
		t.Fatalf("log events %v, want exactly one redis_unavailable and one redis_recovered", got)
	}
}

func TestBreakerFailsOpenToInProcessCircuitsAndBack(t *testing.T) {
	srv := startOwnServer(t)
	client := srv.client()
	var buf logBuffer
	bs, err := redis.NewBreakerStore(client, "crawl-1", redis.Config{FailOpen: true, Logger: zerolog.New(&buf), ReconnectBase: 20 * time.Millisecond, ReconnectCap: 80 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p := breaker.Standard()
	p.Cooldown = 5 * time.Minute
	tripped, err := bs.Circuit("down.test", p.Settings())
	if err != nil {
		t.Fatal(err)
	}
	other, err := bs.Circuit("up.test", p.Settings())
	if err != nil {
		t.Fatal(err)
	}
	tr := tripWith(t, tripped, bwclock.System, p)

	srv.stop()
	// The domain this worker saw tripped stays refused by its fallback.
	if e := refusal(t, tripped, bwclock.System); e.State != circuit.Open || !e.RetryAt.Equal(tr.RetryAt) {
		t.Fatalf("fallback for the tripped domain: %+v, want open until %v", e, tr.RetryAt)
	}
	if s, err := tripped.Snapshot(bwclock.System); err != nil || s.State != circuit.Open {
		t.Fatalf("Snapshot during the outage: %+v, %v; want the fallback's open state", s, err)
	}
	// Another domain is decided in-process: permits, and a local trip.
	var local circuit.Transition
	var last circuit.Ticket
	for range p.Settings().FailuresToTrip() {
		pm, _ := mustAllow(t, other, bwclock.System)
		if tr := mustRecord(t, other, bwclock.System, pm, circuit.Degraded); tr.From != tr.To {
			local = tr
		}
		last = pm
	}
	if local.To != circuit.Open || local.Reason != circuit.ReasonFailureRate {
		t.Fatalf("fallback circuit did not trip on the failures that trip it: %+v", local)
	}

	srv.start()
	// Refused by the fallback until a try reaches Redis, whose circuit for
	// up.test is closed: the local trip was not shared.
	waitAllowed(t, other)
	if e := refusal(t, tripped, bwclock.System); !e.RetryAt.Equal(tr.RetryAt) {
		t.Fatalf("the shared trip after the outage: %+v, want open until %v", e, tr.RetryAt)
	}
	if tr, err := other.Record(bwclock.System, last, circuit.Result{Class: circuit.Degraded}); err != nil || tr.From != tr.To {
		t.Fatalf("a fallback permit recorded after Redis came back: %+v, %v; want ignored", tr, err)
	}
	if got := linkEvents(t, &buf); len(got) != 2 || got[0] != "redis_unavailable" || got[1] != "redis_recovered" {
		t.Fatalf("log events %v, want exactly one redis_unavailable and one redis_recovered", got)
	}
}

func TestBreakerThroughAClosedPortNeverHangs(t *testing.T) {
	client := (&ownServer{port: portOf(t, closedPort(t))}).clientFor(t)
	bs, err := redis.NewBreakerStore(client, "crawl-1", redis.Config{CallTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Store: bs})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = b.Allow("shop.test")
	var open *circuit.OpenError
	if !errors.Is(err, redis.ErrUnavailable) || !errors.As(err, &open) {
		t.Fatalf("Breaker.Allow through a closed port: %v; want ErrUnavailable that converts to a refusal", err)
	}
	t.Logf("refused in %v: %v", time.Since(began), err)
}
