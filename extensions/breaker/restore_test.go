package breaker_test

import (
	"github.com/breakwater-crawl/breakwater/observe"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

func snapshotOf(t *testing.T, b *breaker.Breaker, host string) observe.DomainCircuit {
	t.Helper()
	for _, s := range b.Circuits() {
		if s.Domain == host {
			if one := b.Circuits(host); len(one) != 1 || one[0] != s {
				t.Errorf("Snapshots(%s) = %+v, want [%+v] as in Snapshots()", host, one, s)
			}
			return s
		}
	}
	t.Fatalf("no snapshot of %s", host)
	return observe.DomainCircuit{}
}

// window is a closed circuit's window as a checkpoint saves it; outcomes
// < 0 is a circuit saved open whose cooldown has ended (probation).
func window(host string, outcomes, failures int) observe.DomainCircuit {
	if outcomes < 0 {
		return observe.DomainCircuit{Domain: host, State: circuit.Open, RetryAt: time.Now().Add(-time.Minute)}
	}
	return observe.DomainCircuit{Domain: host, State: circuit.Closed, WindowLen: outcomes, WindowFailures: failures}
}

// A restored window holds the saved failures latest, one short of a trip
// at most: it never trips by itself, counts nothing, and the next failure
// trips it as it would have before the restart.
func TestRestorePutsFailuresBackOneShortOfATripAtMost(t *testing.T) {
	need := breaker.FailuresToTrip(breaker.Standard())
	consecutive := breaker.Standard()
	consecutive.Name, consecutive.ConsecutiveFailures = "consecutive", 3
	for _, tc := range []struct {
		name                 string
		p                    breaker.Profile
		outcomes, failures   int
		wantLen, wantFailing int
	}{
		{"as saved", breaker.Standard(), 12, 4, 12, 4},
		{"more failures than a trip", breaker.Standard(), 20, 15, 20, need - 1},
		{"probation", breaker.Standard(), -1, -1, breaker.Standard().WindowSize, need - 1},
		{"consecutive failures", consecutive, 20, 8, 20, 2},
		{"nothing", breaker.Standard(), 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := breaker.New(breaker.Config{Profile: tc.p})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Restore(window("a.example", tc.outcomes, tc.failures)); err != nil {
				t.Fatal(err)
			}
			s := snapshotOf(t, b, "a.example")
			if s.State != circuit.Closed || s.WindowLen != tc.wantLen || s.WindowFailures != tc.wantFailing {
				t.Fatalf("restored %v with %d outcomes, %d failures; want closed, %d, %d", s.State, s.WindowLen, s.WindowFailures, tc.wantLen, tc.wantFailing)
			}
			if st := b.Stats()[0]; len(st.Outcomes) != 0 || st.Trips != 0 {
				t.Errorf("stats %+v: a restore counts nothing", st)
			}
			if tc.wantFailing != need-1 && tc.p.ConsecutiveFailures == 0 {
				return
			}
			tk, err := b.Allow("a.example")
			if err != nil {
				t.Fatal(err)
			}
			b.Record(tk, circuit.Result{Class: circuit.Degraded})
			if got := b.State("a.example"); got != circuit.Open {
				t.Errorf("after one more failure: %v, want open", got)
			}
		})
	}
}

// A circuit that is not closed is left as it is.
func TestRestoredWindowLeavesAnOpenCircuitAlone(t *testing.T) {
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(observe.DomainCircuit{Domain: "a.example", State: circuit.Open, RetryAt: time.Now().Add(time.Minute), Trips: 2}); err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(window("a.example", 20, 5)); err != nil {
		t.Fatal(err)
	}
	if s := snapshotOf(t, b, "a.example"); s.State != circuit.Open || s.WindowLen != 0 || s.Trips != 2 {
		t.Errorf("snapshot %+v: want open as restored, window empty, 2 trips", s)
	}
}
