package domains

// This file keeps a broad crawl's memory bounded (internal/idle): a domain
// left alone for the idle TTL, with nothing to remember that would change
// a decision, is compacted into a small record and made whole again when
// it is next used. Here is what a domain must remember; internal/idle
// keeps the records and the sweep periods.

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/internal/idle"
	"github.com/breakwater-crawl/breakwater/internal/pace"
)

// DefaultIdleTTL is how long a domain must be left alone before it is
// compacted, unless Config.IdleTTL says otherwise: the fleet guard's default
// Active span, so a compacted domain is never one the guard still counts
// as active.
const DefaultIdleTTL = 5 * time.Minute

// trackerSize is the fewest outcomes a domain's tracker keeps for Stats.
const trackerSize = 100

// pin marks d in use, so no sweep compacts it meanwhile; false if a sweep
// is compacting it (look it up again).
func (d *Domain) pin() bool {
	d.holds.Add(1)
	if d.retired() {
		d.holds.Add(-1)
		return false
	}
	return true
}

// Unpin lets go of a pin Pin took.
func (d *Domain) Unpin() {
	if d.holds.Add(-1) < 0 {
		d.holds.Add(1) // a ticket recorded twice: the count stays sane
	}
}

// touch notes that d is used in this sweep period.
func (b *Set) touch(d *Domain) {
	if e := b.sweeper.Epoch(); d.epoch.Load() != e {
		d.epoch.Store(e)
	}
}

// domainSlow finds or makes host's domain under its shard's lock, so a
// compacted one is revived once, whole.
func (b *Set) domainSlow(host string) (*Domain, error) {
	b.maybeSweep()
	sh := b.dormant.Shard(host)
	sh.Lock()
	defer sh.Unlock()
	if d, ok := b.domains.Load(host); ok {
		// A sweep retires a domain only under this lock and, before it
		// lets go, deletes it or takes the retirement back.
		if d.pin() {
			b.touch(d)
			return d, nil
		}
	}
	// url.Parse slices the host out of the whole URL: a copy of its own
	// keeps a compacted domain from holding the URL of its first request.
	host = strings.Clone(host)
	p := b.profileFor(host)
	d := &Domain{Name: host, Profile: p}
	if err := b.newCircuit(d); err != nil {
		return nil, err
	}
	d.Pace = pace.New(&b.Pacing, d)
	if r, ok := sh.Take(host); ok {
		d.revive(&r, b.Clock)
	}
	d.holds.Store(1)
	d.epoch.Store(b.sweeper.Epoch())
	b.domains.Store(host, d)
	return d, nil
}

// newCircuit gives d, just made, its circuit and tracker. The in-process
// store's circuit and the tracker share the domain's mutex, so that a
// closed Record takes one lock, not two.
func (b *Set) newCircuit(d *Domain) (err error) {
	s := &d.Profile.settings // validated with the profile (New, AddDomainProfile)
	var c circuit.Circuit
	if b.guarded {
		c = circuit.NewLocal(d.Name, s, &d.mu)
	} else if c, err = b.Store.Circuit(d.Name, *s); err != nil {
		return fmt.Errorf("breaker: circuit for %s: %w", d.Name, err)
	}
	if l, ok := c.(circuit.Local); ok {
		d.Circuit = l
	} else {
		d.Circuit = storeCircuit{c}
	}
	if !b.guarded { // no in-process window to begin from (lazy.go)
		d.tracker.Store(d.newTracker())
	}
	return nil
}

// storeCircuit is a store's circuit that is not a circuit.Local, as the
// Domain holds it: it has no closed path of its own, and no window in this
// process, so every call goes through the Circuit interface.
type storeCircuit struct{ circuit.Circuit }

func (storeCircuit) TryAllow() (circuit.Ticket, bool)                    { return circuit.Ticket{}, false }
func (storeCircuit) TryRecordLocked(circuit.Ticket, circuit.Result) bool { return false }
func (storeCircuit) OutcomesLocked() []circuit.Result                    { return nil }

// maybeSweep starts a background sweep if none ran for a quarter of the
// TTL.
func (b *Set) maybeSweep() {
	if b.IdleTTL < 0 {
		return
	}
	if now := b.Clock.Now(); b.sweeper.Start(now) {
		go func() {
			defer b.sweeper.Done()
			b.sweep(now)
		}()
	}
}

// Sweep compacts now every domain idle for the idle TTL with nothing to
// remember. The set sweeps by itself; Sweep is for measurements.
func (b *Set) Sweep() { b.sweep(b.Clock.Now()) }

func (b *Set) sweep(now time.Time) {
	b.sweeper.Sweep(now, func(cut uint32) {
		for d := range b.all {
			if d.epoch.Load() <= cut {
				b.compact(d, now)
			}
		}
		b.domains.Shrink()
	})
}

// compact replaces d by its dormant record if it has nothing to remember.
func (b *Set) compact(d *Domain, now time.Time) {
	if d.holds.Load() != 0 {
		return
	}
	mc := d.Circuit
	if _, shared := mc.(storeCircuit); shared {
		return
	}
	sh := b.dormant.Shard(d.Name)
	sh.Lock()
	defer sh.Unlock()
	d.flags.Or(retired)
	// From here no one pins d. A pin taken before (its holder may still
	// be recording an outcome) shows now or never: checking only after
	// quiet would miss one taken and let go meanwhile, and compact the
	// counts read before its outcome. What quiet checks then stays true.
	var r idle.Record
	ok := d.holds.Load() == 0
	if ok {
		r, ok = d.quiet(mc, now)
	}
	if !ok || !b.domains.CompareAndDelete(d.Name, d) {
		d.flags.And(^uint32(retired))
		return
	}
	b.forget(d) // the caches keep no compacted domain alive
	sh.Put(d.Name, &r)
}

// quiet returns d's dormant record, or false if d has something to
// remember that the record cannot hold.
func (d *Domain) quiet(mc circuit.Local, now time.Time) (r idle.Record, ok bool) {
	if d.open.Load() != nil || d.throttledInARow() != 0 || d.blockedInARow() != 0 ||
		d.unanswered() != 0 { // a checkpoint saves those as suspect failures
		return r, false
	}
	r.Counts, r.Refused = d.counts(), int64(d.Refused.Load())
	if t := d.tracker.Load(); t != nil { // none: no failure settled
		r.Fails, r.NetFails = int64(atomic.LoadInt32(&t.fails)), int64(atomic.LoadInt32(&t.netFails))
	}
	r.Timeout, r.LastOK, r.LastSeen = int64(d.Timeout()), d.lastOK.Load(), d.lastSeen.Load()

	// At rest, the circuit remembers nothing but its trips: closed,
	// no failure in its window, no probe out. (An in-process circuit's
	// Snapshot reads no clock and cannot fail.)
	snap, _ := mc.Snapshot(nil)
	r.Trips = int64(snap.Trips)
	if snap.State != circuit.Closed || snap.WindowFailures != 0 || snap.ProbesInFlight != 0 {
		return r, false
	}

	return r, d.quietTracker().Quiet(&r) && d.Pace.Quiet(now, &r)
}

// revive puts a dormant record back into d, a domain just made.
func (d *Domain) revive(r *idle.Record, clk clock.Clock) {
	for c := range numClasses {
		d.Counts[c].Store(int32(min(r.Counts[c], math.MaxInt32)))
	}
	d.Refused.Store(int32(min(r.Refused, math.MaxInt32)))
	d.lastOK.Store(r.LastOK)
	d.lastSeen.Store(r.LastSeen)
	if r.Trips > 0 {
		// A closed circuit that remembers its trips (RestoreOpen with no
		// time left opens nothing).
		_, _ = d.Circuit.RestoreOpen(clk, time.Time{}, int(r.Trips))
	}
	t := d.newTracker()
	t.Revive(r)
	t.timeout = r.Timeout
	t.fails, t.netFails = int32(r.Fails), int32(r.NetFails)
	d.tracker.Store(t)
	d.Pace.Revive(r)
}

// dormantStats is a compacted domain as Stats shows it.
func (b *Set) dormantStats(name string, r *idle.Record) DomainStats {
	return DomainStats{Domain: name, Profile: b.profileFor(name).Name, State: circuit.Closed, Trips: int(r.Trips),
		Outcomes: outcomes(r.Counts), Refused: r.Refused,
		Tracked: int(r.Tracked), SuccessRate: float64(r.Rate), MedianLatency: time.Duration(r.Median),
		Pace:    pace.Stats{Limit: max(b.Pacing.Parallelism, 0), Gap: max(b.Pacing.MinGap, 0), Pauses: int(r.Pauses), PausedFor: time.Duration(r.PausedFor)},
		Timeout: time.Duration(r.Timeout)}
}
