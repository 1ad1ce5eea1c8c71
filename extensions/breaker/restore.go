package breaker

// This file puts a closed circuit's recent history back after a restart
// (extensions/checkpoint saves it), through the Circuit interface alone.

import (
	"sort"
	"time"
)

// Snapshots returns the circuit of every domain seen, as it stands now,
// sorted by domain: its state and its window's outcomes and failures, for
// a checkpoint to save. A domain whose store cannot be read is left out.
func (b *Breaker) Snapshots() []DomainSnapshot {
	var out []DomainSnapshot
	b.domains.Range(func(_, v any) bool {
		d := v.(*domain)
		if s, err := d.circuit.Snapshot(b.clock); err == nil {
			out = append(out, b.domainSnapshot(d, s))
		}
		return true
	})
	b.rangeDormant(func(name string, r *dormant) {
		out = append(out, DomainSnapshot{Domain: name, Snapshot: Snapshot{State: Closed, Trips: int(r.trips)}})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Domain < out[j].Domain })
	return out
}

// Snapshot returns host's circuit as it stands now; false for a host never
// seen or whose store cannot be read.
func (b *Breaker) Snapshot(host string) (DomainSnapshot, bool) {
	v, ok := b.domains.Load(hostOf(host))
	if !ok {
		if r, ok := b.dormantOf(hostOf(host)); ok {
			return DomainSnapshot{Domain: hostOf(host), Snapshot: Snapshot{State: Closed, Trips: int(r.trips)}}, true
		}
		return DomainSnapshot{}, false
	}
	d := v.(*domain)
	s, err := d.circuit.Snapshot(b.clock)
	if err != nil {
		return DomainSnapshot{}, false
	}
	return b.domainSnapshot(d, s), true
}

func (b *Breaker) domainSnapshot(d *domain, s Snapshot) DomainSnapshot {
	return DomainSnapshot{Domain: d.name, Snapshot: s, HaltUntil: d.pace.stats(b.clock.Now()).HaltUntil,
		Unanswered: int(d.unanswered.Load())}
}

// DomainSnapshot is one domain's circuit at one moment, and the
// Retry-After pause it is under, if any.
type DomainSnapshot struct {
	Domain string
	Snapshot
	HaltUntil time.Time
	// Unanswered counts the requests to the domain that left and were cut
	// by the crawl's own end (its context cancelled or past its deadline):
	// the site may have received them, and nobody knows what it answered.
	// A checkpoint counts them as failures in the window it restores, as
	// it counts requests in flight when a process was killed.
	Unanswered int
}

// RestoreHalt puts back a Retry-After pause a checkpoint saved: no request
// to host leaves before until, whatever the restart.
func (b *Breaker) RestoreHalt(host string, until time.Time) error {
	d, err := b.domain(hostOf(host))
	if err != nil {
		return err
	}
	defer d.unpin()
	d.pace.mu.Lock()
	if until.After(d.pace.halt) {
		d.pace.halt = until
	}
	d.pace.mu.Unlock()
	return nil
}

// RestoreWindow puts back the recent history of host's closed circuit, as
// a checkpoint saved it, so that a site still failing after a restart
// trips as fast as it would have without one: outcomes outcomes in its
// window, the latest failures of them failures (the failures that were
// piling up when the crawl stopped). A negative failures is a probation:
// a full window one failure short of a trip, what a circuit whose
// cooldown ended while the crawl was stopped is owed; its first failure
// re-opens it, as a failed half-open probe would, and a site that
// recovered is not held up.
//
// It never trips the circuit (failures beyond one short of a trip, by the
// failure rate or ConsecutiveFailures, are dropped), counts nothing in
// Stats and calls no hook: nothing was sent. A circuit that is not closed
// is left as it is.
func (b *Breaker) RestoreWindow(host string, outcomes, failures int) error {
	d, err := b.domain(hostOf(host))
	if err != nil {
		return err
	}
	defer d.unpin()
	if s, err := d.circuit.Snapshot(b.clock); err != nil || s.State != Closed {
		return err
	}
	p := d.profile
	most := failuresToTrip(p) - 1
	if p.ConsecutiveFailures > 0 {
		most = min(most, p.ConsecutiveFailures-1)
	}
	if failures < 0 {
		outcomes, failures = p.WindowSize, most
	}
	failures = max(min(failures, most), 0)
	outcomes = max(min(outcomes, p.WindowSize), failures)
	for i := range outcomes {
		o := Result{Class: Success}
		if i >= outcomes-failures {
			o.Class = Degraded
		}
		pm, _, err := d.circuit.Allow(b.clock)
		if err != nil {
			return err
		}
		if _, err := d.circuit.Record(b.clock, pm, o); err != nil {
			return err
		}
	}
	return nil
}
