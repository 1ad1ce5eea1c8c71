package redis_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"

	"github.com/breakwater-crawl/breakwater/circuit/circuittest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
)

// newRedisCircuit is circuittest's constructor: a fresh crawl under a key
// prefix of its own for every circuit.
func newRedisCircuit(t *testing.T, domain string, s circuit.Settings) circuit.Circuit {
	t.Helper()
	client, prefix := redistest.New(t)
	bs, err := redis.NewBreakerStore(client, "crawl-1", redis.Config{Namespace: prefix})
	if err != nil {
		t.Fatal(err)
	}
	c, err := bs.Circuit(domain, s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The same table the in-process circuit passes (extensions/breaker's
// circuit_test.go), run against the shared circuit.
func TestBreakerStorePassesTheCircuitTable(t *testing.T) {
	circuittest.Run(t, newRedisCircuit)
}

// TestSharedCircuitDecidesExactlyAsTheInProcessOne drives an in-process
// circuit and a shared one with the same random sequence of Allows,
// Records (of any class, stale ones included), clock moves, restores and
// snapshots, and requires the same answer to every call: permits,
// refusals, and transitions down to their evidence, so the breaker's logs
// read the same whichever store decides. The outcomes come back in any
// order: most often the newest ticket first, as synchronous Colly records
// a page after the pages it visited, else the oldest or one at random, and
// now and then with its Seq cleared (recorded as if issued then). Both
// windows keep the latest outcomes by the order requests left.
func TestSharedCircuitDecidesExactlyAsTheInProcessOne(t *testing.T) {
	for _, p := range []breaker.Profile{breaker.Conservative(), breaker.Standard(), breaker.Aggressive(), threeStrikes} {
		t.Run(p.Name, func(t *testing.T) {
			client, prefix := redistest.New(t)
			// Probe leases never run out here: the in-process circuit has none.
			bs, err := redis.NewBreakerStore(client, "diff", redis.Config{Namespace: prefix, ProbeLease: 1000 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			shared, err := bs.Circuit("shop.test:8080", p.Settings())
			if err != nil {
				t.Fatal(err)
			}
			local, err := circuit.MemoryStore{}.Circuit("shop.test:8080", p.Settings())
			if err != nil {
				t.Fatal(err)
			}
			clk := clocktest.NewFake(epoch)
			rnd := rand.New(rand.NewPCG(7, uint64(p.WindowSize)))
			var permits []circuit.Ticket
			classes := []circuit.Class{circuit.Success, circuit.Success, circuit.Success, circuit.Degraded, circuit.Invalid,
				circuit.Throttled, circuit.Blocked, circuit.Gone, circuit.ClientError, circuit.Excluded}
			transitions := 0
			clear(reasonsSeen)
			for step := range 4000 {
				switch r := rnd.IntN(100); {
				case r < 45:
					lp, lt, lerr := local.Allow(clk)
					sp, st, serr := shared.Allow(clk)
					sameAnswer(t, step, "Allow", lp, sp, lt, st, lerr, serr)
					if lerr == nil {
						permits = append(permits, lp)
					}
					transitions += count(lt)
				case r < 85 && len(permits) > 0:
					var i int
					switch k := rnd.IntN(10); {
					case k < 5: // the newest: a synchronous collector unwinding
						i = len(permits) - 1
					case k < 8: // the oldest: requests answered in turn
						i = 0
					default:
						i = rnd.IntN(len(permits))
					}
					pm := permits[i]
					permits = append(permits[:i], permits[i+1:]...)
					if rnd.IntN(20) == 0 { // a ticket without its place: as if issued now
						pm.Seq = 0
					}
					class := classes[rnd.IntN(len(classes))]
					if (step/400)%2 == 1 && rnd.IntN(2) == 0 { // a failing stretch
						class = circuit.Degraded
					}
					o := circuit.Result{Class: class, Latency: time.Duration(rnd.IntN(3000)) * time.Millisecond}
					lt, lerr := local.Record(clk, pm, o)
					st, serr := shared.Record(clk, pm, o)
					sameAnswer(t, step, "Record", circuit.Ticket{}, circuit.Ticket{}, lt, st, lerr, serr)
					transitions += count(lt)
				case r < 97:
					clk.Advance(time.Duration(rnd.IntN(int(p.Cooldown/time.Millisecond)/4+1)) * time.Millisecond)
				case r < 98:
					retryAt := clk.Now().Add(time.Duration(rnd.IntN(600)-100) * time.Second)
					trips := rnd.IntN(5)
					lt, lerr := local.RestoreOpen(clk, retryAt, trips)
					st, serr := shared.RestoreOpen(clk, retryAt, trips)
					sameAnswer(t, step, "RestoreOpen", circuit.Ticket{}, circuit.Ticket{}, lt, st, lerr, serr)
					transitions += count(lt)
				case r < 99:
					until := clk.Now().Add(time.Duration(rnd.IntN(600)-100) * time.Second)
					reason := holdReasons[rnd.IntN(len(holdReasons))]
					lt, lerr := local.HoldOpen(clk, until, reason)
					st, serr := shared.HoldOpen(clk, until, reason)
					sameAnswer(t, step, "HoldOpen", circuit.Ticket{}, circuit.Ticket{}, lt, st, lerr, serr)
					transitions += count(lt)
				default:
					ls, _ := local.Snapshot(clk)
					ss, err := shared.Snapshot(clk)
					if err != nil {
						t.Fatalf("step %d: Snapshot: %v", step, err)
					}
					if ls.State != ss.State || !ls.RetryAt.Equal(ss.RetryAt) || ls.Trips != ss.Trips || ls.WindowLen != ss.WindowLen ||
						ls.WindowFailures != ss.WindowFailures || ls.ProbesInFlight != ss.ProbesInFlight {
						t.Fatalf("step %d: Snapshot differs:\n in-process %+v\n     shared %+v", step, ls, ss)
					}
				}
			}
			defer func() {
				for _, r := range []string{circuit.ReasonFailureRate, circuit.ReasonCooldownElapsed, circuit.ReasonProbeFailed,
					circuit.ReasonProbesPassed, circuit.ReasonRestored} {
					if reasonsSeen[r] == 0 {
						t.Errorf("no %s transition in the sequence (seen: %v)", r, reasonsSeen)
					}
				}
				if reasonsSeen[circuit.ReasonSlowCalls]+reasonsSeen[circuit.ReasonLatencySlope]+reasonsSeen[circuit.ReasonFleetPause] == 0 {
					t.Errorf("no HoldOpen transition in the sequence (seen: %v)", reasonsSeen)
				}
				t.Logf("transitions by reason: %v", reasonsSeen)
			}()
			if transitions < 10 {
				t.Fatalf("only %d transitions in 4000 steps: the sequence does not exercise the state machine", transitions)
			}
			t.Logf("%s: 4000 steps, %d transitions, identical", p.Name, transitions)
		})
	}
}

var holdReasons = []string{circuit.ReasonSlowCalls, circuit.ReasonLatencySlope, circuit.ReasonFleetPause, circuit.ReasonFailureRate}

var threeStrikes = breaker.Profile{Name: "three-strikes", WindowSize: 10, FailureThreshold: 0.9, ConsecutiveFailures: 3, Cooldown: 2 * time.Minute, HalfOpenProbes: 1}

var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

var reasonsSeen = map[string]int{}

func count(t circuit.Transition) int {
	if t.From != t.To {
		reasonsSeen[t.Reason]++
		return 1
	}
	return 0
}

// sameAnswer fails the test unless both circuits answered alike.
func sameAnswer(t *testing.T, step int, op string, lp, sp circuit.Ticket, lt, st circuit.Transition, lerr, serr error) {
	t.Helper()
	if lp != sp { // Seq included: both number the tickets they issue
		t.Fatalf("step %d: %s tickets differ: in-process %+v, shared %+v", step, op, lp, sp)
	}
	if (lerr == nil) != (serr == nil) {
		t.Fatalf("step %d: %s errors differ: in-process %v, shared %v", step, op, lerr, serr)
	}
	if lerr != nil {
		var le, se *circuit.OpenError
		if !errors.As(lerr, &le) || !errors.As(serr, &se) || le.Key != se.Key || le.State != se.State || !le.RetryAt.Equal(se.RetryAt) {
			t.Fatalf("step %d: %s refusals differ: in-process %v, shared %v", step, op, lerr, serr)
		}
	}
	if !sameTransition(lt, st) {
		t.Fatalf("step %d: %s transitions differ:\n in-process %+v\n     shared %+v", step, op, lt, st)
	}
	// The breaker logs RetryAt as RFC 3339 with its zone: the same instant
	// in another zone would log differently.
	if lt.To == circuit.Open && lt.RetryAt.Format(time.RFC3339Nano) != st.RetryAt.Format(time.RFC3339Nano) {
		t.Fatalf("step %d: %s retry-at logs differ: in-process %s, shared %s", step, op,
			lt.RetryAt.Format(time.RFC3339Nano), st.RetryAt.Format(time.RFC3339Nano))
	}
}

func sameTransition(a, b circuit.Transition) bool {
	if a.Key != b.Key || a.From != b.From || a.To != b.To || !a.At.Equal(b.At) || a.Reason != b.Reason ||
		a.FailureRate != b.FailureRate || a.MedianLatency != b.MedianLatency || !a.RetryAt.Equal(b.RetryAt) || a.Trips != b.Trips ||
		len(a.Window) != len(b.Window) {
		return false
	}
	for i := range a.Window {
		if a.Window[i] != b.Window[i] {
			return false
		}
	}
	return true
}
