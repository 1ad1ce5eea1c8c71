package pace

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func newTestPace(t *testing.T, p Config, clk clock.Clock) *Pace {
	t.Helper()
	p.Clock = clk
	p, err := p.Normalise()
	if err != nil {
		t.Fatal(err)
	}
	return New(&p, RoomFunc(func() int { return math.MaxInt }))
}

func TestPaceThrottleHaltsAndMultipliesDown(t *testing.T) {
	p := newTestPace(t, Config{Parallelism: 8, MinGap: 0}, nil)
	limit, gap, changed, _ := p.Throttled(t0, 2*time.Second, 0)
	if !changed || limit != 4 || gap != minThrottleGap {
		t.Fatalf("first throttle: limit %d gap %v changed %v; want 4, %v, true", limit, gap, changed, minThrottleGap)
	}
	// A request that left after the slowdown (episode 1) is throttled too,
	// within the first pause: one more step down.
	limit, gap, _, _ = p.Throttled(t0.Add(time.Second), 2*time.Second, 1)
	if limit != 2 || gap != 2*minThrottleGap {
		t.Fatalf("second throttle: limit %d gap %v; want 2, %v", limit, gap, 2*minThrottleGap)
	}
	s := p.Stats(t0)
	if s.Pauses != 1 || s.PausedFor != 3*time.Second || !s.HaltUntil.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("stats %+v: want one pause of 3s in total until t0+3s", s)
	}
	p.Throttled(t0.Add(time.Minute), time.Second, 2) // a new, separate pause
	if s := p.Stats(t0.Add(time.Minute)); s.Pauses != 2 || s.PausedFor != 4*time.Second || s.Limit != 1 {
		t.Fatalf("stats %+v: want 2 pauses, 4s paused, limit floored at 1", s)
	}
}

func TestPaceRecoversStepByStepNeverPastTheUser(t *testing.T) {
	p := newTestPace(t, Config{Parallelism: 4, MinGap: 10 * time.Millisecond, Recover: 3}, nil)
	p.Throttled(t0, time.Second, 0) // limit 2, gap 20ms (from 10ms × 2), step 2ms
	steps := 0
	for range 1000 {
		if _, _, changed := p.Succeeded(); changed {
			steps++
		}
	}
	s := p.Stats(t0)
	if s.Limit != 4 || s.Gap != 10*time.Millisecond {
		t.Fatalf("after recovery: limit %d gap %v; want the user's 4 and 10ms", s.Limit, s.Gap)
	}
	if steps != 5 { // gap 20→18→16→14→12→10 ms; limit 2→3→4 on the way
		t.Fatalf("%d recovery steps, want 5 (additive, one per 3 clean successes)", steps)
	}
	if _, _, changed := p.Succeeded(); changed {
		t.Fatal("stepped past the user's pace")
	}
}

func TestPaceAcquireKeepsGapAndLimit(t *testing.T) {
	clk := clocktest.NewFake(t0)
	p := newTestPace(t, Config{Parallelism: 2, MinGap: 100 * time.Millisecond}, clk)
	var started atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := p.AcquireLending(context.Background(), nil, nil); err != nil {
				t.Error(err)
				return
			}
			started.Add(1)
		}()
	}
	// One starts at once; the second waits for the gap.
	waitFor(t, func() bool { return started.Load() == 1 && clk.Waiters() >= 1 })
	clk.Advance(100 * time.Millisecond)
	waitFor(t, func() bool { return started.Load() == 2 })
	clk.Advance(time.Second) // the gap has passed, but both slots are taken
	time.Sleep(20 * time.Millisecond)
	if n := started.Load(); n != 2 {
		t.Fatalf("%d started with 2 slots taken", n)
	}
	p.Release()
	waitFor(t, func() bool { return started.Load() == 3 })
	p.Release()
	clk.Advance(time.Second)
	waitFor(t, func() bool { return started.Load() == 4 })
	wg.Wait()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := p.AcquireLending(ctx, nil, nil); err == nil {
		t.Fatal("acquire with both slots taken returned despite a cancelled context")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPacingRejectsBadSettings(t *testing.T) {
	for _, p := range []Config{{Backoff: 0.5}, {Recover: -1}, {Step: -time.Second}} {
		if _, err := p.Normalise(); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

func TestPaceHandsSlotsOverFirstInFirstOut(t *testing.T) {
	clk := clocktest.NewFake(t0)
	p := newTestPace(t, Config{Parallelism: 1}, clk)
	if _, _, err := p.AcquireLending(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 3)
	for i := range 3 {
		go func() {
			if _, _, err := p.AcquireLending(context.Background(), nil, nil); err == nil {
				order <- i
			}
		}()
		waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.gateN() == i+1 })
	}
	for want := range 3 {
		p.Release()
		if got := <-order; got != want {
			t.Fatalf("slot %d went to waiter %d, want %d: not first in, first out", want, got, want)
		}
	}
	p.Release()
	if s := p.Stats(t0); s.InFlight != 0 {
		t.Fatalf("in flight %d after every slot came back, want 0", s.InFlight)
	}
}

func TestPaceWaiterThatGivesUpHoldsNothing(t *testing.T) {
	clk := clocktest.NewFake(t0)
	p := newTestPace(t, Config{Parallelism: 1}, clk)
	p.AcquireLending(context.Background(), nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, _, err := p.AcquireLending(ctx, nil, nil); done <- err }()
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.gateN() == 1 })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled waiter got a slot")
	}
	p.Release()
	if s := p.Stats(t0); s.InFlight != 0 || p.gateN() != 0 {
		t.Fatalf("in flight %d, %d waiters: a cancelled waiter leaked its slot", s.InFlight, p.gateN())
	}
}

func TestPaceReservedRequestHonoursAHaltThatCameLater(t *testing.T) {
	clk := clocktest.NewFake(t0)
	p := newTestPace(t, Config{Parallelism: 2, MinGap: time.Second}, clk)
	p.AcquireLending(context.Background(), nil, nil) // starts now; the next may start at t0+1s
	started := make(chan time.Time, 1)
	go func() {
		p.AcquireLending(context.Background(), nil, nil)
		started <- clk.Now()
	}()
	waitFor(t, func() bool { return clk.Waiters() == 1 })
	p.Throttled(clk.Now(), 30*time.Second, 0) // a 429 arrives while it sleeps
	clk.Advance(time.Second)
	select {
	case at := <-started:
		t.Fatalf("started at t0+%v, during the 30 s halt", at.Sub(t0))
	case <-time.After(50 * time.Millisecond):
	}
	clk.Advance(29 * time.Second)
	if at := <-started; at.Before(t0.Add(30 * time.Second)) {
		t.Fatalf("started at t0+%v, before the halt ended", at.Sub(t0))
	}
}

// A request first seen at the transport (a redirect's hop, an unregistered
// clone's) takes a slot over the user's limit while the circuit's room
// allows, ahead of the requests queued behind the limit; past the room it
// waits, and a freed slot goes to it first.
func TestPaceHopGoesOverTheLimitWithinTheRoom(t *testing.T) {
	room := 2
	p := New(&Config{Parallelism: 1, Backoff: 2, Recover: 10, MaxGap: time.Minute}, RoomFunc(func() int { return room }))
	if _, _, err := p.AcquireLending(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	queued := make(chan error, 1)
	go func() { _, _, err := p.AcquireLending(context.Background(), nil, nil); queued <- err }() // behind the limit
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.gateN() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, n, err := p.AcquireAtTransport(ctx, nil, nil); err != nil || n != 2 {
		t.Fatalf("hop: %d in flight, %v; want 2 in flight at once (over the limit of 1, within a room of 2)", n, err)
	}
	hop := make(chan error, 1)
	go func() { _, _, err := p.AcquireAtTransport(ctx, nil, nil); hop <- err }() // past the room: waits
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.transportN() == 1 })
	p.Release()
	if err := <-hop; err != nil {
		t.Fatalf("the waiting hop: %v; want the freed slot", err)
	}
	select {
	case err := <-queued:
		t.Fatalf("the request behind the limit left (%v) while 2 were in flight", err)
	default:
	}
	p.Release()
	p.Release()
	if err := <-queued; err != nil {
		t.Fatal(err)
	}
}

// A request that must wait lends what it holds for the wait and takes it
// back before AcquireLending returns, a slot or an error; one that need
// not wait lends nothing.
func TestPaceLendsOnlyWhileWaiting(t *testing.T) {
	p := New(&Config{Parallelism: 1, Backoff: 2, Recover: 10, MaxGap: time.Minute}, RoomFunc(func() int { return 10 }))
	var lent, back atomic.Int32
	lend := func() func() {
		lent.Add(1)
		return func() { back.Add(1) }
	}
	if _, _, err := p.AcquireLending(context.Background(), nil, lend); err != nil {
		t.Fatal(err)
	}
	if lent.Load() != 0 {
		t.Fatal("a request with a free slot lent what it holds")
	}
	got := make(chan error, 1)
	go func() { _, _, err := p.AcquireLending(context.Background(), nil, lend); got <- err }()
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.gateN() == 1 })
	if lent.Load() != 1 || back.Load() != 0 {
		t.Fatalf("waiting: lent %d, taken back %d; want 1, 0", lent.Load(), back.Load())
	}
	p.Release()
	if err := <-got; err != nil || back.Load() != 1 {
		t.Fatalf("after the wait: %v, taken back %d; want a slot and 1", err, back.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, _, err := p.AcquireLending(ctx, nil, lend); got <- err }()
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.gateN() == 1 })
	cancel()
	if err := <-got; err == nil || lent.Load() != 2 || back.Load() != 2 {
		t.Fatalf("a cancelled wait: %v, lent %d, taken back %d; want an error, 2, 2", err, lent.Load(), back.Load())
	}
}

// gateN and transportN count the waiters at the gate and at the transport.
func (p *Pace) gateN() int      { n, _ := p.waiters(false); return n }
func (p *Pace) transportN() int { n, _ := p.waiters(true); return n }

// estimate is the rate estimate, the zero one before the pace has a cold part.
func (p *Pace) estimate() estimator {
	if p.cold == nil {
		return estimator{}
	}
	return p.est
}

// A domain's reservations reuse their array: reserving a slot in
// OnRequest and giving it back allocates nothing once the domain has held
// one (one allocation a request, else).
func TestAReservationCycleAllocatesNothing(t *testing.T) {
	p := New(&Config{Parallelism: 2, Backoff: 2, Recover: 10, MaxGap: time.Minute}, RoomFunc(func() int { return 10 }))
	ctx := context.Background()
	key := new(int)
	cycle := func() {
		if err := p.Reserve(ctx, key); err != nil {
			t.Fatal(err)
		}
		p.Unreserve(key)
	}
	cycle()
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Errorf("%v allocations a reservation, want 0", n)
	}
}
