package domains

// This file saves a domain's circuit for a checkpoint, and puts it back
// after a restart, through the Circuit interface alone.

import (
	"github.com/breakwater-crawl/breakwater/observe"
	"sort"
	"strings"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/internal/idle"
)

// DomainSnapshot is one domain's circuit as a checkpoint saves it
// (observe.DomainCircuit).
type DomainSnapshot = observe.DomainCircuit

// Snapshots returns the circuits of hosts (all domains seen when none are
// named), sorted by domain, for a checkpoint to save. A host never seen, or
// whose store cannot be read, is left out.
func (b *Set) Snapshots(hosts ...string) []DomainSnapshot {
	var out []DomainSnapshot
	if len(hosts) > 0 {
		for _, h := range hosts {
			if s, ok := b.snapshot(h); ok {
				out = append(out, s)
			}
		}
	} else {
		for d := range b.all {
			if s, ok := b.domainSnapshot(d); ok {
				out = append(out, s)
			}
		}
		b.dormant.Range(func(name string, r *idle.Record) {
			out = append(out, DomainSnapshot{Domain: name, State: circuit.Closed, Trips: int(r.Trips)})
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Domain < out[j].Domain })
	return out
}

// snapshot returns host's circuit as it stands now; false for a host never
// seen or whose store cannot be read.
func (b *Set) snapshot(host string) (DomainSnapshot, bool) {
	host = strings.ToLower(host)
	if d := b.Lookup(host); d != nil {
		return b.domainSnapshot(d)
	}
	if r, ok := b.dormant.Get(host); ok {
		return DomainSnapshot{Domain: host, State: circuit.Closed, Trips: int(r.Trips)}, true
	}
	return DomainSnapshot{}, false
}

// domainSnapshot completes what d's circuit reports with what the breaker
// knows of d; false if the circuit's store cannot be read.
func (b *Set) domainSnapshot(d *Domain) (DomainSnapshot, bool) {
	s, err := d.Circuit.Snapshot(b.Clock)
	if err != nil {
		return DomainSnapshot{}, false
	}
	return DomainSnapshot{Domain: d.Name, State: s.State, RetryAt: s.RetryAt, Trips: s.Trips,
		WindowLen: s.WindowLen, WindowFailures: s.WindowFailures, ProbesInFlight: s.ProbesInFlight,
		HaltUntil: d.Pace.Stats(b.Clock.Now()).HaltUntil, Unanswered: int(d.unanswered())}, true
}

// Restore puts back a domain's circuit and pause as a checkpoint saved
// them, so a restart is no way around a cooldown or a Retry-After; a
// cooldown that ended meanwhile leaves the circuit on probation
// (docs/checkpoints.md). Nothing is counted and no hook is called.
func (b *Set) Restore(s DomainSnapshot) error {
	d, err := b.Pin(strings.ToLower(s.Domain))
	if err != nil {
		return err
	}
	defer d.Unpin()
	now := b.Clock.Now()
	if s.HaltUntil.After(now) {
		d.Pace.HaltUntil(s.HaltUntil)
	}
	switch {
	case s.State != circuit.Closed && s.RetryAt.After(now):
		t, err := d.Circuit.RestoreOpen(b.Clock, s.RetryAt, s.Trips)
		if err == nil {
			b.transitioned(d, t)
		}
		return err
	case s.State != circuit.Closed:
		return restoreWindow(d.Circuit, b.Clock, d.Profile.Settings(), -1, -1)
	default:
		return restoreWindow(d.Circuit, b.Clock, d.Profile.Settings(), s.WindowLen, s.WindowFailures)
	}
}

// restoreWindow puts outcomes results, the latest failures of them
// failures, back into c, a circuit deciding with s, as a checkpoint saved
// them: a crawl restarted into a site still failing trips as fast as it
// would have without the restart. A negative failures is the probation of
// a circuit saved open whose cooldown ended while the crawl was stopped: a
// full window one failure short of a trip, so its first failure re-opens
// it. The window never trips the circuit: failures beyond one short of a
// trip, by the failure rate or ConsecutiveFailures, are dropped. A circuit
// that is not closed gets no window. It goes through Allow and Record
// alone, so it restores any Circuit.
func restoreWindow(c circuit.Circuit, clk clock.Clock, s circuit.Settings, outcomes, failures int) error {
	if snap, err := c.Snapshot(clk); err != nil || snap.State != circuit.Closed {
		return err
	}
	most := s.FailuresToTrip() - 1
	if s.ConsecutiveFailures > 0 {
		most = min(most, s.ConsecutiveFailures-1)
	}
	if failures < 0 {
		outcomes, failures = s.WindowSize, most
	}
	failures = max(min(failures, most), 0)
	outcomes = max(min(outcomes, s.WindowSize), failures)
	for i := range outcomes {
		r := circuit.Result{Class: circuit.Success}
		if i >= outcomes-failures {
			r.Class = circuit.Degraded
		}
		tk, _, err := c.Allow(clk)
		if err != nil {
			return err
		}
		if _, err := c.Record(clk, tk, r); err != nil {
			return err
		}
	}
	return nil
}
