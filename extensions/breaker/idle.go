package breaker

// This file keeps a broad crawl's memory bounded: a domain left alone for
// the idle TTL, with nothing to remember that would change a decision, is
// compacted into a small record and made whole again when it is next used.

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/internal/early"
	"github.com/breakwater-crawl/breakwater/internal/pace"
	"github.com/breakwater-crawl/breakwater/internal/packmap"
)

// DefaultIdleTTL is how long a domain must be left alone before it is
// compacted, unless Config.IdleTTL says otherwise: the fleet guard's default
// Active span, so a compacted domain is never one the guard still counts
// as active.
const DefaultIdleTTL = 5 * time.Minute

// dormantShards is how many locks the compacted domains are spread over.
const dormantShards = 64

// idleState is the breaker's side of compaction.
type idleState struct {
	ttl       time.Duration // < 0: never compact
	seed      maphash.Seed
	epoch     atomic.Uint32 // the sweep period under way; domains note the latest they were used in
	lastSweep atomic.Int64  // unix nanos of the latest sweep
	sweeping  atomic.Bool   // a background sweep is running

	sweepMu sync.Mutex
	ends    []epochEnd // when each recent period ended, oldest first

	shards [dormantShards]dormantShard
	base   int64 // unix nanos at New: dormant records keep times relative to it
}

type epochEnd struct {
	epoch uint32
	at    time.Time
}

// dormantShard holds some of the compacted domains, and their totals, so
// that a scrape need not read them one by one.
type dormantShard struct {
	mu  sync.Mutex
	m   packmap.Map // host → its dormant record, encoded (dormant.encode): no pointer per domain for the collector to mark
	tot dormantTotals
}

// dormantTotals sums the compacted domains of a shard.
type dormantTotals struct {
	domains   int
	counts    [numClasses]int64
	refused   int64
	trips     int64
	pauses    int64
	pausedFor time.Duration
}

func (t *dormantTotals) add(r *dormant, sign int64) {
	t.domains += int(sign)
	for c := range numClasses {
		t.counts[c] += sign * int64(r.counts[c])
	}
	t.refused += sign * int64(r.refused)
	t.trips += sign * int64(r.trips)
	t.pauses += sign * int64(r.pauses)
	t.pausedFor += time.Duration(sign) * time.Duration(r.pausedFor)
}

// dormant is a compacted domain: everything its decisions and its Stats
// need, nothing else. The profile is resolved again from the name. It is
// kept encoded (encode): an idle domain's record is mostly zeros and small
// counts, some 40 bytes as varints against 128 as a struct.
type dormant struct {
	counts                                      [numClasses]uint32
	refused, trips, streak, healthyRun          uint32
	fails, netFails, pauses                     uint32
	successes, sinceTimeout, tracked            uint32
	baseFlight                                  uint32 // the requests in flight the slope's baseline was taken at
	slowN, slowNext                             uint16
	rate                                        float32
	median, baseline, timeout, lastOK, lastSeen int64
	pausedFor                                   int64
}

func (s *idleState) init(ttl time.Duration, now time.Time) {
	s.ttl = ttl
	s.seed = maphash.MakeSeed()
	s.epoch.Store(1)
	s.lastSweep.Store(now.UnixNano())
	s.base = now.UnixNano()
}

func (s *idleState) shard(host string) *dormantShard {
	return &s.shards[maphash.String(s.seed, host)%dormantShards]
}

// pin marks d in use, so no sweep compacts it meanwhile; false if a sweep
// is compacting it (look it up again).
func (d *domain) pin() bool {
	d.holds.Add(1)
	if d.retired.Load() {
		d.holds.Add(-1)
		return false
	}
	return true
}

func (d *domain) unpin() {
	if d.holds.Add(-1) < 0 {
		d.holds.Add(1) // a ticket recorded twice: the count stays sane
	}
}

// touch notes that d is used in this sweep period.
func (b *Breaker) touch(d *domain) {
	if e := b.idle.epoch.Load(); d.epoch.Load() != e {
		d.epoch.Store(e)
	}
}

// domainSlow finds or makes host's domain under its shard's lock, so a
// compacted one is revived once, whole.
func (b *Breaker) domainSlow(host string) (*domain, error) {
	b.maybeSweep()
	sh := b.idle.shard(host)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if v, ok := b.domains.Load(host); ok {
		// A sweep retires a domain only under this lock and, before it
		// lets go, deletes it or takes the retirement back.
		if d := v.(*domain); d.pin() {
			b.touch(d)
			return d, nil
		}
	}
	// url.Parse slices the host out of the whole URL: a copy of its own
	// keeps a compacted domain from holding the URL of its first request.
	host = strings.Clone(host)
	p := b.profileFor(host)
	d := &domain{name: host, profile: p, need: p.Settings().FailuresToTrip(), blockedAfter: b.blockedAfter}
	if err := b.newCircuit(d); err != nil {
		return nil, err
	}
	d.pace = pace.New(pace.Config(b.pacing), d.room, b.clock)
	if enc, ok := sh.m.Get(host); ok {
		sh.m.Delete(host)
		r := decodeDormant(enc, b.idle.base)
		sh.tot.add(&r, -1)
		d.revive(&r, b.clock)
	}
	d.holds.Store(1)
	d.epoch.Store(b.idle.epoch.Load())
	b.domains.Store(host, d)
	return d, nil
}

// newCircuit gives d, just made, its circuit and tracker. The in-process
// store's circuit and the tracker share the domain's mutex, so that a
// closed Record takes one lock, not two.
func (b *Breaker) newCircuit(d *domain) error {
	s, size := d.profile.Settings(), max(b.trackerSize, d.profile.WindowSize)
	var c circuit.Circuit
	if _, ok := b.store.(circuit.MemoryStore); ok {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("breaker: circuit for %s: %w", d.name, err)
		}
		c = circuit.NewMemoryGuarded(d.name, s, &d.mu)
		d.tracker = early.NewGuarded(size, d.profile.early(), &d.mu)
		d.guarded = true
	} else {
		var err error
		if c, err = b.store.Circuit(d.name, s); err != nil {
			return fmt.Errorf("breaker: circuit for %s: %w", d.name, err)
		}
		d.tracker = early.New(size, d.profile.early())
	}
	d.circuit = c
	d.mem, _ = c.(*circuit.Memory)
	if fc, ok := c.(failureCounter); ok {
		d.counter = fc
	} else {
		d.local = newLocalFailures(d.profile.WindowSize)
	}
	return nil
}

// maybeSweep starts a background sweep if none ran for a quarter of the
// TTL.
func (b *Breaker) maybeSweep() {
	if b.idle.ttl < 0 {
		return
	}
	now := b.clock.Now()
	if now.UnixNano()-b.idle.lastSweep.Load() < int64(b.idle.ttl/4) {
		return
	}
	if !b.idle.sweeping.CompareAndSwap(false, true) {
		return
	}
	b.idle.lastSweep.Store(now.UnixNano())
	go func() {
		defer b.idle.sweeping.Store(false)
		b.sweep(now)
	}()
}

// Sweep compacts now every domain left alone for at least the idle TTL
// with nothing to remember (see Config.IdleTTL). The breaker sweeps by
// itself; Sweep is for a measurement, or for a long pause in a crawl.
func (b *Breaker) Sweep() { b.sweep(b.clock.Now()) }

func (b *Breaker) sweep(now time.Time) {
	if b.idle.ttl < 0 {
		return
	}
	s := &b.idle
	s.sweepMu.Lock()
	defer s.sweepMu.Unlock()
	s.lastSweep.Store(now.UnixNano())
	// The period under way ends now; a domain last used in a period that
	// ended at least a TTL ago has been left alone that long.
	cur := s.epoch.Load()
	s.ends = append(s.ends, epochEnd{cur, now})
	s.epoch.Store(cur + 1)
	limit := now.Add(-s.ttl)
	cut, keep := uint32(0), 0
	for i, e := range s.ends {
		if !e.at.After(limit) {
			cut, keep = e.epoch, i
		}
	}
	s.ends = s.ends[keep:]
	if cut == 0 {
		return
	}
	b.domains.Range(func(_, v any) bool {
		if d := v.(*domain); d.epoch.Load() <= cut {
			b.compact(d, now)
		}
		return true
	})
}

// compact replaces d by its dormant record if it has nothing to remember.
func (b *Breaker) compact(d *domain, now time.Time) {
	if d.holds.Load() != 0 {
		return
	}
	mc := d.mem
	if mc == nil {
		return
	}
	sh := b.idle.shard(d.name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	d.retired.Store(true)
	// From here no one pins d. A pin taken before (its holder may still
	// be recording an outcome) shows now or never: checking only after
	// quiet would miss one taken and let go meanwhile, and compact the
	// counts read before its outcome.
	if d.holds.Load() != 0 {
		d.retired.Store(false)
		return
	}
	// What is checked now stays true.
	r, ok := d.quiet(mc, now)
	if !ok {
		d.retired.Store(false)
		return
	}
	if !b.domains.CompareAndDelete(d.name, d) {
		d.retired.Store(false)
		return
	}
	sh.m.Set(d.name, r.encode(b.idle.base))
	sh.tot.add(&r, +1)
}

func fits32(n int64) bool { return n >= 0 && n <= math.MaxUint32 }

// quiet returns d's dormant record, or false if d has something to
// remember that the record cannot hold.
func (d *domain) quiet(mc *circuit.Memory, now time.Time) (r dormant, ok bool) {
	if d.open.Load() != nil || d.throttled.Load() != 0 || d.blocked.Load() != 0 || d.local != nil ||
		d.unanswered.Load() != 0 { // a checkpoint saves those as suspect failures
		return r, false
	}
	for c := range numClasses {
		n := d.counts[c].Load()
		if !fits32(n) {
			return r, false
		}
		r.counts[c] = uint32(n)
	}
	refused := d.refused.Load()
	if !fits32(refused) {
		return r, false
	}
	r.refused = uint32(refused)
	r.fails, r.netFails = uint32(d.fails.Load()), uint32(d.netFails.Load())
	r.timeout, r.lastOK, r.lastSeen = d.timeout.Load(), d.lastOK.Load(), d.lastSeen.Load()

	trips, closed := mc.AtRest()
	r.trips = uint32(trips)
	if !closed {
		return r, false
	}

	t, outs, calm := d.tracker.Quiet()
	calm = calm && fits32(int64(t.Successes))
	r.streak, r.healthyRun = uint32(t.Streak), uint32(t.HealthyRun)
	r.successes = uint32(t.Successes)
	r.slowN, r.slowNext = uint16(t.SlowN), uint16(t.SlowNext)
	r.baseline = int64(t.Baseline)
	r.baseFlight = uint32(min(t.BaseFlight, math.MaxUint32))
	if !calm {
		return r, false
	}
	if len(outs) > 0 {
		r.tracked = uint32(len(outs))
		r.rate = float32(1 - circuit.FailureRate(outs))
		r.median = int64(circuit.MedianLatency(outs))
	}

	pauses, pausedFor, still := d.pace.Quiet(now)
	r.pauses, r.pausedFor = uint32(pauses), int64(pausedFor)
	return r, still && fits32(int64(pauses))
}

// revive puts a dormant record back into d, a domain just made.
func (d *domain) revive(r *dormant, clk clock.Clock) {
	for c := range numClasses {
		d.counts[c].Store(int64(r.counts[c]))
	}
	d.refused.Store(int64(r.refused))
	d.fails.Store(int32(r.fails))
	d.netFails.Store(int32(r.netFails))
	d.timeout.Store(r.timeout)
	d.lastOK.Store(r.lastOK)
	d.lastSeen.Store(r.lastSeen)
	if r.trips > 0 {
		// A closed circuit that remembers its trips (RestoreOpen with no
		// time left opens nothing).
		_, _ = d.circuit.RestoreOpen(clk, time.Time{}, int(r.trips))
	}
	d.tracker.Revive(early.Rest{Streak: int(r.streak), HealthyRun: int(r.healthyRun), Successes: int(r.successes),
		SlowN: int(r.slowN), SlowNext: int(r.slowNext), Baseline: time.Duration(r.baseline), BaseFlight: int(r.baseFlight)})
	d.pace.Revive(int(r.pauses), time.Duration(r.pausedFor))
}

// dormantStats is a compacted domain as Stats shows it.
func (b *Breaker) dormantStats(name string, r *dormant) DomainStats {
	s := DomainStats{Domain: name, Profile: b.profileFor(name).Name, State: circuit.Closed, Trips: int(r.trips),
		Outcomes: make(map[string]int64, numClasses), Refused: int64(r.refused),
		Tracked: int(r.tracked), SuccessRate: float64(r.rate), MedianLatency: time.Duration(r.median),
		Pace:    PaceStats{Limit: max(b.pacing.Parallelism, 0), Gap: max(b.pacing.MinGap, 0), Pauses: int(r.pauses), PausedFor: time.Duration(r.pausedFor)},
		Timeout: time.Duration(r.timeout)}
	for c := range numClasses {
		if n := r.counts[c]; n > 0 {
			s.Outcomes[circuit.Class(c).String()] = int64(n)
		}
	}
	return s
}

// rangeDormant calls f for every compacted domain, one shard locked at a
// time.
func (b *Breaker) rangeDormant(f func(name string, r *dormant)) {
	for i := range b.idle.shards {
		sh := &b.idle.shards[i]
		sh.mu.Lock()
		sh.m.Range(func(name, enc string) bool {
			r := decodeDormant(enc, b.idle.base)
			f(name, &r)
			return true
		})
		sh.mu.Unlock()
	}
}

// dormantTotals sums every compacted domain.
func (b *Breaker) dormantTotals() (t dormantTotals) {
	for i := range b.idle.shards {
		sh := &b.idle.shards[i]
		sh.mu.Lock()
		s := sh.tot
		sh.mu.Unlock()
		t.domains += s.domains
		for c := range numClasses {
			t.counts[c] += s.counts[c]
		}
		t.refused += s.refused
		t.trips += s.trips
		t.pauses += s.pauses
		t.pausedFor += s.pausedFor
	}
	return t
}

// dormantOf returns host's dormant record, if it is compacted.
func (b *Breaker) dormantOf(host string) (dormant, bool) {
	sh := b.idle.shard(host)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	enc, ok := sh.m.Get(host)
	if !ok {
		return dormant{}, false
	}
	return decodeDormant(enc, b.idle.base), true
}

// encode writes r as varints, times relative to base (unix nanos), into a
// string: the dormant map's value.
func (r *dormant) encode(base int64) string {
	buf := make([]byte, 0, 48)
	u := func(v uint64) { buf = binary.AppendUvarint(buf, v) }
	for c := range numClasses {
		u(uint64(r.counts[c]))
	}
	for _, v := range []uint32{r.refused, r.trips, r.streak, r.healthyRun, r.fails, r.netFails, r.pauses, r.successes, r.tracked, r.baseFlight} {
		u(uint64(v))
	}
	u(uint64(r.slowN))
	u(uint64(r.slowNext))
	u(uint64(math.Float32bits(r.rate)))
	for _, v := range []int64{r.median, r.baseline, r.timeout, r.pausedFor} {
		buf = binary.AppendVarint(buf, v)
	}
	for _, t := range []int64{r.lastOK, r.lastSeen} {
		if t == 0 {
			u(0) // never
			continue
		}
		u(1 + zigzag(t-base))
	}
	return string(buf)
}

// decodeDormant reads what encode wrote.
func decodeDormant(s string, base int64) (r dormant) {
	b := []byte(s)
	u := func() uint64 {
		v, n := binary.Uvarint(b)
		b = b[max(n, 0):]
		return v
	}
	for c := range numClasses {
		r.counts[c] = uint32(u())
	}
	for _, p := range []*uint32{&r.refused, &r.trips, &r.streak, &r.healthyRun, &r.fails, &r.netFails, &r.pauses, &r.successes, &r.tracked, &r.baseFlight} {
		*p = uint32(u())
	}
	r.slowN, r.slowNext = uint16(u()), uint16(u())
	r.rate = math.Float32frombits(uint32(u()))
	for _, p := range []*int64{&r.median, &r.baseline, &r.timeout, &r.pausedFor} {
		v, n := binary.Varint(b)
		b = b[max(n, 0):]
		*p = v
	}
	for _, p := range []*int64{&r.lastOK, &r.lastSeen} {
		if v := u(); v != 0 {
			*p = base + unzigzag(v-1)
		}
	}
	return r
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }
