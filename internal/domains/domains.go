package domains

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/breakwater-crawl/breakwater/observe"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/internal/deadline"
	"github.com/breakwater-crawl/breakwater/internal/idle"
	"github.com/breakwater-crawl/breakwater/internal/pace"
	"github.com/rs/zerolog"
)

// Set keeps one circuit per domain (the URL's host, lower-cased, port
// included), created on first use, with the policies beside each: pacing,
// the early warnings, the adaptive timeout, the blocked hold, idle
// compaction, and the fleet guard over all of them. It knows nothing of
// Colly: extensions/breaker wires it into a collector. It is safe for
// concurrent use.
type Set struct {
	Config        // normalised by New; Domains holds the patterns normalised (AddDomainProfile)
	realTime bool // Clock is clock.System: cached refusals end by timer
	guarded  bool // Store is the in-process one: a domain's mutex guards its circuit too (newCircuit)
	fleet    *fleetGuard
	prior    deadline.Prior // the timeout a domain without its own borrows
	base     *profile       // Config.Profile with what its domains read

	domains liveMap     // the domains kept whole, by name (live.go)
	hot     *hotDomains // domains by a hash of their name, in front of the map (hot.go)
	// last is the domain asked about last (hot.go), for a crawl that asks
	// about one host many times in a row. Padded to a cache line of its
	// own: the fields beside it are read by every call.
	_       [64]byte
	last    atomic.Pointer[Domain]
	_       [56]byte
	sweeper idle.Sweeper // which domains were left alone for the idle TTL (idle.go)
	dormant idle.Set     // the compacted domains
	coarse  coarseClock  // the system clock, read about once a second
}

// Config is what a Set is made with; extensions/breaker's Config
// documents each field. A zero field keeps the default.
type Config struct {
	Profile       circuit.Profile
	Store         circuit.Store
	Clock         clock.Clock
	Log           zerolog.Logger
	AlarmAfter    int
	BlockedAfter  int
	ResendHorizon time.Duration
	Pacing        pace.Config
	Fleet         FleetConfig
	IdleTTL       time.Duration
	Rand          func() float64
	OnTransition  []func(circuit.Transition)
	OnDegrading   []func(domain string, median, baseline time.Duration)
	// Domains are the per-pattern profiles, in the order given (see
	// AddDomainProfile).
	Domains []Override
}

// Override gives the hosts matching Pattern their own Profile.
type Override struct {
	Pattern string
	Profile circuit.Profile
	shared  *profile // Profile with what its domains read (AddDomainProfile)
}

// New returns an empty Set; Config.Profile has been validated.
func New(c Config) (*Set, error) {
	b := &Set{Config: c, hot: newHotDomains()}
	b.domains.init()
	b.Store = cmp.Or(b.Store, circuit.Store(circuit.MemoryStore{}))
	_, b.guarded = b.Store.(circuit.MemoryStore)
	b.Clock = cmp.Or(b.Clock, clock.System)
	b.IdleTTL = cmp.Or(b.IdleTTL, DefaultIdleTTL)
	if b.Rand == nil {
		b.Rand = rand.Float64
	}
	var err error
	if b.Fleet, err = c.Fleet.Normalise(); err != nil { // a zero Config is fleetDefaults
		return nil, fmt.Errorf("breaker: %w", err)
	}
	b.fleet = newFleetGuard(b.Fleet)
	c.Pacing.Clock = b.Clock // the paces read the set's clock through their shared Config
	if b.Pacing, err = c.Pacing.Normalise(); err != nil {
		return nil, fmt.Errorf("breaker: %w", err)
	}
	b.realTime = b.Clock == clock.System
	b.base = newProfile(b.Profile, b.BlockedAfter)
	b.Domains = nil
	for _, o := range c.Domains {
		if err := b.AddDomainProfile(o.Pattern, o.Profile); err != nil {
			return nil, err
		}
	}
	now := b.Clock.Now()
	b.sweeper.Init(b.IdleTTL, now)
	b.dormant.Init(now)
	return b, nil
}

// Hook adds hooks to those given before.
func (b *Set) Hook(onTransition func(circuit.Transition), onDegrading func(string, time.Duration, time.Duration), resendHorizon time.Duration) {
	if onTransition != nil {
		b.OnTransition = append(b.OnTransition, onTransition)
	}
	if onDegrading != nil {
		b.OnDegrading = append(b.OnDegrading, onDegrading)
	}
	if resendHorizon != 0 {
		b.ResendHorizon = resendHorizon
	}
}

// Domain is everything the breaker knows about one host. The fields a
// closed Allow and Record touch come first, in about two cache lines (mem
// to counts[Success]): on a broad crawl a domain is mostly out of the
// CPU's cache, and each further line read is a miss.
type Domain struct {
	// Circuit is the domain's circuit. One that is not a circuit.Local (a
	// shared store's) is wrapped in a storeCircuit, whose closed paths
	// always answer no: one interface, not two beside each other (a
	// Domain in 208 bytes).
	Circuit circuit.Local
	// tracker is the early warnings' state, made at the first outcome
	// that is not a quick success, past lazyOutcomes, or at a transition
	// (lazy.go); written under mu.
	tracker atomic.Pointer[tracker]
	mu      sync.Mutex                // guards the tracker and, if the set is guarded, the circuit (newCircuit)
	open    atomic.Pointer[openMark]  // the cached refusal for the cheap early check; nil = ask the circuit
	rare    atomic.Pointer[rareState] // 429s and 401/403s in a row, the blocked hold, the lent slot's cap, cut requests (blocked.go); nil until first needed
	holds   atomic.Int32              // tickets out and calls under way: a held domain is never compacted
	epoch   atomic.Uint32             // the latest sweep period it was used in
	// flags are retired (a sweep is compacting it: look it up again),
	// failedNow (a failure was recorded in this process, not restored) and
	// lazyFlight (lazy.go) in one word, not three fields.
	flags   atomic.Uint32
	Refused atomic.Int32             // requests refused without being sent
	Counts  [numClasses]atomic.Int32 // 2³¹ outcomes of one domain: years at any pace a site allows

	Name     string
	Profile  *profile // shared by the domains of the profile
	Pace     *pace.Pace
	lastSeen atomic.Int64 // unix nanos of the latest request that reached the gate
	lastOK   atomic.Int64 // unix nanos at which the latest success through the gate left
	// failSince is when the first failure since the latest success left
	// (unix nanos; 0: none): the fleet guard asks whether any domain
	// succeeded after the failures that tripped others began.
	failSince atomic.Int64
	slopeAt   atomic.Int64 // unix nanos of the latest slope evaluation, by the breaker's clock (roughNow)
	// The tracker's are the adaptive timeout (Timeout, Slow) and the
	// failures since the last transition (a failure makes the tracker):
	// a domain without one has none. What is seldom needed is rare's
	// (blocked.go). A Domain fits 160 bytes, its size class.
}

// Timeout is d's adaptive request timeout; 0: none yet.
func (d *Domain) Timeout() time.Duration {
	if t := d.tracker.Load(); t != nil {
		return time.Duration(atomic.LoadInt64(&t.timeout))
	}
	return 0
}

// Slow is Timeout before its floor (0: none yet): a request still
// unanswered after it has lent its shared LimitRule slot (Lend).
func (d *Domain) Slow() time.Duration {
	if t := d.tracker.Load(); t != nil {
		return time.Duration(atomic.LoadInt64(&t.slowAfter))
	}
	return 0
}

// SetTimeout gives d the adaptive timeout t, as its tracker would, and
// the tracker, made now, if d had none: for benchmarks.
func (d *Domain) SetTimeout(t time.Duration) {
	atomic.StoreInt64(&d.trackerMade().timeout, int64(t))
}

// The bits of Domain.flags; lazyFlight is the top 16.
const (
	retired   = 1 << iota // a sweep is compacting it: look it up again
	failedNow             // a failure was recorded in this process (not restored)
	lazyShift = 16
)

// retired reports whether a sweep is compacting d.
func (d *Domain) retired() bool { return d.flags.Load()&retired != 0 }

// failedNow reports whether a failure of d was recorded in this process.
func (d *Domain) failedNow() bool { return d.flags.Load()&failedNow != 0 }

// all yields every domain kept whole (for d := range b.all), as
// liveMap.Range does.
func (b *Set) all(yield func(*Domain) bool) { b.domains.Range(yield) }

// Pin returns host's domain, pinned: the caller unpins it, or hands
// the pin to a Ticket.
func (b *Set) Pin(host string) (*Domain, error) {
	if d := b.cached(host); d != nil {
		return d, nil
	}
	return b.lookup(host)
}

// lookup is Pin past the caches: the map, else domainSlow. The domain
// found goes into the hash-indexed cache.
func (b *Set) lookup(host string) (*Domain, error) {
	if d, ok := b.domains.Load(host); ok {
		if d.pin() {
			b.touch(d)
			b.hot.put(d)
			return d, nil
		}
	}
	d, err := b.domainSlow(host)
	if err == nil {
		b.hot.put(d)
	}
	return d, err
}

// Ticket is the right to send one request to a domain: Breaker.Allow
// hands it out, and Breaker.Record takes it back with the attempt's
// result. It is a small value: no allocation on the hot path.
type Ticket struct {
	c circuit.Ticket // what the domain's circuit handed out
	d *Domain        // the domain, pinned until Record
	// inFlight is how many requests to the domain were in flight as this
	// one left, itself included (0: not known, the ticket did not come
	// through the gate's pace): the slope weighs its latency by it.
	inFlight int
	stalled  time.Duration // of the latency, this process's own stall: no slope evidence
}

// Allow is what breaker.Breaker.Allow does (its doc says how).
func (b *Set) Allow(host string) (Ticket, error) {
	d := b.cached(host) // before strings.ToLower: a cached domain's name is its key
	if d == nil {
		var err error
		if d, err = b.lookup(strings.ToLower(host)); err != nil {
			return Ticket{}, err
		}
	}
	// AllowPinned's two common cases in line, as KnownOpen decides them:
	// a cached refusal on the system clock, and a closed in-process
	// circuit with no refusal cached.
	if d.heldErr() == nil {
		if m := d.open.Load(); m == nil {
			if tk, ok := d.Circuit.TryAllow(); ok {
				b.remember(d, tk.Seq)
				return Ticket{c: tk, d: d}, nil
			}
		} else if b.realTime {
			b.remember(d, uint64(d.Refused.Add(1)))
			d.Unpin()
			return Ticket{}, m.err
		}
	}
	return b.AllowPinned(d)
}

// AllowPinned asks d's circuit; d is pinned, and the pin goes to the ticket, or
// is let go with a refusal.
func (b *Set) AllowPinned(d *Domain) (Ticket, error) {
	if open := b.KnownOpen(d); open != nil {
		b.remember(d, uint64(d.Refused.Add(1)))
		d.Unpin()
		return Ticket{}, open
	}
	if tk, ok := d.Circuit.TryAllow(); ok {
		b.remember(d, tk.Seq)
		return Ticket{c: tk, d: d}, nil
	}
	return b.allowCircuit(d)
}

// allowCircuit asks d's circuit through the Circuit interface: a store's
// circuit, or an in-process one that is not closed.
func (b *Set) allowCircuit(d *Domain) (Ticket, error) {
	tk, t, err := d.Circuit.Allow(b.Clock)
	b.transitioned(d, t)
	if err != nil {
		d.Unpin()
		if open, ok := err.(*circuit.OpenError); ok {
			d.Refused.Add(1)
			if open.State == circuit.Open {
				b.setOpen(d, open)
			}
			return Ticket{}, open
		}
		if errors.Is(err, circuit.ErrOpen) {
			d.Refused.Add(1) // a store refusing for its own reasons (Redis down, failing closed)
		}
		return Ticket{}, err
	}
	return Ticket{c: tk, d: d}, nil
}

// roughNow is the breaker's clock in unix nanos, at most about a second
// old on the system clock (coarseClock): for timestamps only coarse
// questions read. Any other clock is read, so a fake clock's Advance takes
// effect at once.
func (b *Set) roughNow() int64 {
	if b.realTime {
		return b.coarse.Now()
	}
	return b.Clock.Now().UnixNano()
}

// openMark is a cached refusal: the error to hand out, and until when.
type openMark struct {
	err   *circuit.OpenError
	until int64 // unix nanos
}

// KnownOpen returns the cached refusal while the domain is known to be
// open: no lock, no allocation, no store round trip. On the system clock
// it does not even read the time (a clock read is most of a refusal's
// cost, 50–70 ns on some virtual machines): a timer armed by setOpen drops
// the mark once RetryAt has passed. Any other clock is read, so a fake
// clock's Advance takes effect at once.
func (b *Set) KnownOpen(d *Domain) *circuit.OpenError {
	if h := d.heldErr(); h != nil {
		return b.heldRefusal(d, h)
	}
	m := d.open.Load()
	if m == nil {
		return nil
	}
	if !b.realTime && b.Clock.Now().UnixNano() >= m.until {
		return nil
	}
	return m.err
}

// setOpen caches e as the domain's refusal until e.RetryAt. A refusal
// already over (a shared store's RetryAt behind this machine's clock) is
// not cached: there is nothing to answer from memory, and on the system
// clock it would cost a timer firing at once for every such refusal.
func (b *Set) setOpen(d *Domain, e *circuit.OpenError) {
	now := b.Clock.Now()
	if !e.RetryAt.After(now) {
		return
	}
	m := &openMark{err: e, until: e.RetryAt.UnixNano()}
	d.open.Store(m)
	if b.realTime {
		// Only this mark: a later trip's stays.
		time.AfterFunc(e.RetryAt.Sub(now), func() { d.open.CompareAndSwap(m, nil) })
	}
}

// Record is what breaker.Breaker.Record does (its doc says how).
func (b *Set) Record(t Ticket, o circuit.Result) {
	d := t.d
	if d == nil {
		return
	}
	b.touch(d)
	if int(o.Class) < numClasses {
		d.Counts[o.Class].Add(1)
	}
	if o.Class.Failure() && !d.failedNow() {
		d.flags.Or(failedNow)
	}
	// The tracker and, if guarded, the circuit under one lock: a result
	// that cannot move the circuit is recorded in both at once.
	d.mu.Lock()
	var sig trackerSignals
	if tr := d.trackerFor(o, t.inFlight); tr != nil {
		sig = tr.ObserveLocked(o, t.inFlight, t.stalled)
	}
	recorded := b.guarded && d.Circuit.TryRecordLocked(t.c, o)
	d.mu.Unlock()
	b.alarms(d, o.Class, t.c.Seq)
	switch {
	case !recorded:
		b.recordCircuit(d, t, o, sig)
	case sig.Any():
		b.early(d, sig)
	}
	d.Unpin() // last: a pinned domain is not compacted while its outcome is recorded
}

// recordCircuit records o in d's circuit through the Circuit interface
// (a store's circuit, or a result that may move an in-process one) and
// acts on what moved, else on the tracker's signals sig.
func (b *Set) recordCircuit(d *Domain, t Ticket, o circuit.Result, sig trackerSignals) {
	tr, err := d.Circuit.Record(b.Clock, t.c, o)
	switch {
	case err != nil:
		b.Log.Error().Str("event", "breaker_store_error").Str("domain", d.Name).Err(err).Msg("breaker: recording an outcome failed")
	case tr.From != tr.To:
		b.transitioned(d, tr) // a trip by the window supersedes what the tracker saw
	case sig.Any():
		b.early(d, sig)
	}
}

// transitioned acts on t, a move of d's circuit; a t that moved nothing
// (From == To) is ignored.
func (b *Set) transitioned(d *Domain, t circuit.Transition) {
	if t.From == t.To {
		return
	}
	clientSide := false
	if tr := d.tracker.Load(); tr != nil { // none: no failure settled yet
		clientSide = 2*atomic.SwapInt32(&tr.netFails, 0) > atomic.SwapInt32(&tr.fails, 0)
	}
	defer d.Pace.Admit() // the circuit's room may have grown
	streak := d.trackerAt(t).Transitioned(t)
	trip := t.To == circuit.Open && circuit.CountsAsTrip(t.Reason)
	if trip {
		t = b.grow(d, t, streak)
	}
	lvl := zerolog.InfoLevel
	if t.To == circuit.Open {
		lvl = zerolog.WarnLevel
		b.setOpen(d, &circuit.OpenError{Key: d.Name, State: circuit.Open, RetryAt: t.RetryAt})
	} else {
		d.open.Store(nil)
	}
	b.Log.WithLevel(lvl).Str("event", "breaker_transition").EmbedObject(transitionLog(t)).
		Msgf("breaker: %s %s → %s (%s)", t.Key, t.From, t.To, t.Reason)
	for _, f := range b.OnTransition {
		f(t)
	}
	if trip {
		b.fleetTripped(d, t.At, clientSide)
	}
}

// MoreBlocked counts n more 401/403 answers to t's request in its
// domain's blocked run: tries sent again through other proxies to tell
// whether the site or the proxy refused, before the answer t records.
func (b *Set) MoreBlocked(t Ticket, n int) {
	if d := t.Domain(); d != nil {
		for range n {
			b.alarms(d, circuit.Blocked, t.c.Seq)
		}
	}
}

// alarms counts throttled and blocked answers in a row and warns each time
// a run reaches the alarm threshold. Blocked runs follow the order requests
// left (seq; 0 unknown): a success that left before the run's first answer
// came, recorded late, does not end it.
func (b *Set) alarms(d *Domain, c circuit.Class, seq uint64) {
	switch c {
	case circuit.Throttled:
		b.fleetAlarm(b.Clock.Now())
		if n := int64(d.rareMade().throttled.Add(1)); n%int64(b.AlarmAfter) == 0 {
			b.Log.Warn().Str("event", "throttled_sustained").Str("domain", d.Name).Int64("in_a_row", n).
				Msg("breaker: domain keeps answering 429; slow down or fix the client, the target is not down")
		}
	case circuit.Blocked:
		b.fleetAlarm(b.Clock.Now())
		r := d.rareMade()
		if seq != 0 && r.blockedFrom.Load() == 0 {
			// The requests still in flight left before this answer came:
			// the server may have answered them first, so their successes
			// do not end the run either. Their seqs are taken to follow
			// this one's (the answer's own slot is still held); one that
			// left after a request already answered is not covered.
			r.blockedFrom.CompareAndSwap(0, seq+uint64(max(d.Pace.Stats(b.Clock.Now()).InFlight-1, 0)))
		}
		n := int64(r.blocked.Add(1))
		if b.BlockedAfter > 0 && n == int64(b.BlockedAfter) {
			b.holdBlocked(d, n)
		}
		if n%int64(b.AlarmAfter) == 0 {
			b.Log.Warn().Str("event", "blocked_sustained").Str("domain", d.Name).Int64("in_a_row", n).
				Msg("breaker: domain keeps answering 403; a client, proxy or fingerprint problem, not an outage")
		}
	case circuit.Success:
		if r := d.rare.Load(); r != nil { // nil: no 429 or 401/403 yet, no run to end
			if r.throttled.Load() != 0 {
				r.throttled.Store(0)
			}
			if r.blocked.Load() != 0 {
				if from := r.blockedFrom.Load(); seq == 0 || from == 0 || seq > from {
					r.blocked.Store(0)
					r.blockedFrom.Store(0)
				}
			}
		}
	}
}

// State is what breaker.Breaker.State does (its doc says how).
func (b *Set) State(host string) circuit.State {
	if d := b.Lookup(strings.ToLower(host)); d != nil {
		if s, err := d.Circuit.Snapshot(b.Clock); err == nil {
			return s.State
		}
	}
	return circuit.Closed
}

// DomainStats is one domain's state and counters (observe.DomainStats).
type DomainStats = observe.DomainStats

// Stats is what breaker.Breaker.Stats does (its doc says how).
func (b *Set) Stats() []DomainStats {
	now := b.Clock.Now()
	var out []DomainStats
	for d := range b.all {
		out = append(out, b.statsOf(d, now))
	}
	b.dormant.Range(func(name string, r *idle.Record) { out = append(out, b.dormantStats(name, r)) })
	sort.Slice(out, func(i, j int) bool { return out[i].Domain < out[j].Domain })
	return out
}
