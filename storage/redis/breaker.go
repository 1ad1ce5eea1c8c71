package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	goredis "github.com/redis/go-redis/v9"
)

// breakerStore is NewBreakerStore's circuit.Store.
type breakerStore struct {
	client goredis.UniversalClient
	crawl  string
	prefix []string // per shard: "<ns>:{<crawl>}:b:" unless Config.Shards
	s      settings
	link   *link
}

// NewBreakerStore returns the breaker store of the crawl crawlID on
// client (breaker.Config.Store): it keeps the circuit breaker of every
// domain of the crawl in Redis, shared by all the workers passing the same
// namespace and crawl id, so a trip seen by one is seen by all, and
// half-open probes are limited across all of them. Each Allow and Record
// is one atomic Lua round trip; nothing is held while a request is in
// flight. An idle domain's keys expire after Config.Retention, an open
// one's not before its cooldown. While Redis is unreachable the store
// fails closed, or open with Config.FailOpen. It is safe for concurrent
// use. Config.CallTimeout defaults to 1 s here. It does not contact Redis;
// bad options are reported wrapped in ErrInvalidConfig.
func NewBreakerStore(client goredis.UniversalClient, crawlID string, c Config) (circuit.Store, error) {
	c.CallTimeout = cmp.Or(c.CallTimeout, time.Second)
	s, err := build(client, crawlID, c)
	if err != nil {
		return nil, err
	}
	prefix := shardPrefixes(s.Namespace, crawlID, s.Shards)
	for i := range prefix {
		prefix[i] += "b:"
	}
	policy := "refusing every request (fail closed)"
	if s.FailOpen {
		policy = "deciding with in-process circuits (fail open)"
	}
	return &breakerStore{client: client, crawl: crawlID, prefix: prefix, s: s, link: newLink("breaker", crawlID, policy, s)}, nil
}

// domainKeys returns domain's keys: state, window and probe leases.
func (bs *breakerStore) domainKeys(domain string) []string {
	d := strings.ToLower(domain)
	p := bs.prefix[shardOf(d, len(bs.prefix))]
	return []string{p + "s:" + d, p + "w:" + d, p + "p:" + d}
}

// Circuit returns domain's shared circuit configured by p; it implements
// circuit.Store and does not contact Redis. The profile travels with each
// call: every worker should use the same one for a domain.
func (bs *breakerStore) Circuit(domain string, p circuit.Settings) (circuit.Circuit, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(domain) == "" {
		return nil, fmt.Errorf("breakwater/redis: breaker store for crawl %q: empty domain", bs.crawl)
	}
	d := strings.ToLower(domain)
	return &shared{bs: bs, domain: d, p: p, keys: bs.domainKeys(d),
		profile: []any{p.WindowSize, p.FailuresToTrip(), p.ConsecutiveFailures, ceilMicros(p.Cooldown),
			p.HalfOpenProbes, ceilMicros(bs.s.ProbeLease), bs.s.Retention.Milliseconds()},
		seen: newSeenFailures(p.WindowSize),
	}, nil
}

// shared is one domain's shared circuit; see lua/circuit_*.lua.
type shared struct {
	bs      *breakerStore
	domain  string
	p       circuit.Settings
	keys    []string
	profile []any // ARGV[2..8]

	openUntil atomic.Int64             // last known, in Unix µs (0: not open), for a fallback
	trips     atomic.Int64             // last known, for a fallback
	fallback  atomic.Pointer[fallback] // Config.FailOpen only, while Redis is unreachable
	seen      *seenFailures            // recorded here since the circuit last moved
}

// fallback is a Config.FailOpen store's circuit while Redis is unreachable.
type fallback struct{ circuit.Circuit }

// fallbackGen marks the generation of a fallback circuit's ticket.
const fallbackGen = uint64(1) << 63

// reasons indexes the Reason constants by the scripts' codes.
var reasons = [...]string{1: circuit.ReasonFailureRate, 2: circuit.ReasonConsecutiveFailures,
	3: circuit.ReasonProbeFailed, 4: circuit.ReasonProbesPassed}

// Allow asks the shared circuit for a ticket: one round trip. A closed
// circuit's ticket carries a Seq numbered by Redis across all workers,
// which orders the window. While Redis is unreachable it fails closed
// (*UnavailableError), or open (Config.FailOpen) to the fallback.
func (c *shared) Allow(clk clock.Clock) (_ circuit.Ticket, t circuit.Transition, _ error) {
	defer c.moved(&t)
	clk = cmp.Or(clk, clock.System)
	now := clk.Now()
	res, err := c.run(clk, now, scriptCircuitAllow, "breaker allow", 7)
	if err != nil {
		if isUnavailable(err) {
			return c.allowDown(clk, clk.Now(), err)
		}
		return circuit.Ticket{}, circuit.Transition{}, err
	}
	granted, state, gen, retryAt, trips, changed := toInt(res[0]), circuit.State(toInt(res[1])), uint64(toInt(res[2])), toInt(res[3]), toInt(res[4]), toInt(res[5])
	c.trips.Store(trips)
	if granted != 1 {
		at := micros(retryAt, now)
		switch state {
		case circuit.Closed: // paused: a worker was given a Retry-After
		case circuit.Open:
			c.openUntil.Store(retryAt)
		default:
			state, at = circuit.HalfOpen, now.Add(c.p.Cooldown)
		}
		return circuit.Ticket{}, circuit.Transition{}, &circuit.OpenError{Key: c.domain, State: state, RetryAt: at}
	}
	if changed == 1 {
		c.openUntil.Store(0)
		t = circuit.Transition{Key: c.domain, From: circuit.Open, To: circuit.HalfOpen, At: now,
			Reason: circuit.ReasonCooldownElapsed, Trips: int(trips)}
	}
	return circuit.Ticket{Gen: gen, Probe: state == circuit.HalfOpen, Seq: uint64(toInt(res[6]))}, t, nil
}

// WindowFailures counts the failures recorded here since the circuit last
// moved: other workers' are unknown without a round trip.
func (c *shared) WindowFailures() int { return c.seen.failures() }

// moved forgets the results seen when *t moved the circuit.
func (c *shared) moved(t *circuit.Transition) {
	if t.From != t.To {
		c.seen.reset()
	}
}

func (c *shared) allowDown(clk clock.Clock, now time.Time, err error) (circuit.Ticket, circuit.Transition, error) {
	if c.bs.s.FailOpen {
		fb, ferr := c.fallbackCircuit(clk, now)
		if ferr != nil {
			return circuit.Ticket{}, circuit.Transition{}, errors.Join(ferr, err)
		}
		p, t, ferr := fb.Allow(clk)
		if ferr != nil {
			return circuit.Ticket{}, t, ferr
		}
		p.Gen |= fallbackGen
		return p, t, nil
	}
	since, next, cause := c.bs.link.state()
	if !next.After(now) {
		next = now.Add(c.bs.s.ReconnectBase)
	}
	return circuit.Ticket{}, circuit.Transition{}, &unavailableError{Domain: c.domain, Since: since, RetryAt: next, Err: cmp.Or(cause, err)}
}

// fallbackCircuit returns the fallback circuit, made on first use open
// until the shared circuit's last known retry-at.
func (c *shared) fallbackCircuit(clk clock.Clock, now time.Time) (circuit.Circuit, error) {
	if fb := c.fallback.Load(); fb != nil {
		return fb.Circuit, nil
	}
	mc, err := circuit.MemoryStore{}.Circuit(c.domain, c.p)
	if err != nil { // not expected: Circuit validated the profile
		return nil, fmt.Errorf("breakwater/redis: fail-open fallback circuit for %s: %w", c.domain, err)
	}
	if until := c.openUntil.Load(); until > 0 {
		_, _ = mc.RestoreOpen(clk, micros(until, now), int(c.trips.Load()))
	}
	if !c.fallback.CompareAndSwap(nil, &fallback{mc}) {
		if fb := c.fallback.Load(); fb != nil {
			return fb.Circuit, nil
		}
	}
	return mc, nil
}

// Record gives the ticket back with its outcome: one round trip, none when
// the outcome cannot change anything.
func (c *shared) Record(clk clock.Clock, p circuit.Ticket, o circuit.Result) (t circuit.Transition, _ error) {
	if o.Class.Counted() {
		c.seen.add(o.Class.Failure()) // a stale result counts too: the room errs small
	}
	defer c.moved(&t)
	clk = cmp.Or(clk, clock.System)
	if p.Gen&fallbackGen != 0 {
		fb := c.fallback.Load()
		if fb == nil {
			return circuit.Transition{}, nil // handed out before Redis came back: the shared circuit rules now
		}
		p.Gen &^= fallbackGen
		return fb.Record(clk, p, o)
	}
	if !o.Class.Counted() && !p.Probe {
		return circuit.Transition{}, nil // changes nothing in any state
	}
	now := clk.Now()
	entry := strconv.Itoa(int(o.Class)) + ":" + strconv.FormatInt(int64(o.Latency), 10)
	res, err := c.run(clk, now, scriptCircuitRecord, "breaker record", 0,
		strconv.FormatUint(p.Gen, 10), flag(p.Probe), entry, flag(o.Class.Counted()), flag(o.Class.Failure()),
		strconv.FormatUint(p.Seq, 10))
	if isUnavailable(err) {
		return circuit.Transition{}, fmt.Errorf("breakwater/redis: %s's outcome (%s) was not recorded in the shared circuit: %w", c.domain, o.Class, err)
	}
	if err != nil || len(res) == 0 || toInt(res[0]) == 0 {
		return circuit.Transition{}, err
	}
	if len(res) != 7 {
		return circuit.Transition{}, c.corrupt("breaker record", len(res), 7)
	}
	from, to, reason, trips, retryAt := circuit.State(toInt(res[1])), circuit.State(toInt(res[2])), toInt(res[3]), toInt(res[4]), toInt(res[5])
	if reason <= 0 || int(reason) >= len(reasons) {
		return circuit.Transition{}, fmt.Errorf("breakwater/redis: breaker record for %s on crawl %q: %w: unknown reason code %d",
			c.domain, c.bs.crawl, ErrCorrupt, reason)
	}
	evidence, err := c.evidence(res[6]) // empty but for a trip on failures
	if err != nil {
		return circuit.Transition{}, err
	} else if reasons[reason] == circuit.ReasonProbeFailed {
		evidence = []circuit.Result{o}
	}
	c.trips.Store(trips)
	t = circuit.Transition{Key: c.domain, From: from, To: to, At: now, Reason: reasons[reason], Window: evidence,
		FailureRate: circuit.FailureRate(evidence), MedianLatency: circuit.MedianLatency(evidence), Trips: int(trips)}
	if to != circuit.Open {
		retryAt = 0
	}
	c.openUntil.Store(retryAt)
	t.RetryAt = micros(retryAt, now)
	return t, nil
}

// Snapshot reads the shared circuit, or the fallback while Redis is
// unreachable (else an error wrapping ErrUnavailable).
func (c *shared) Snapshot(clk clock.Clock) (circuit.Snapshot, error) {
	clk = cmp.Or(clk, clock.System)
	now := clk.Now()
	res, err := c.run(clk, now, scriptCircuitSnapshot, "breaker snapshot", 6)
	if err != nil {
		if fb := c.fallback.Load(); fb != nil && isUnavailable(err) {
			return fb.Snapshot(clk)
		}
		return circuit.Snapshot{}, err
	}
	return circuit.Snapshot{Key: c.domain, State: circuit.State(toInt(res[0])), RetryAt: micros(toInt(res[1]), now),
		Trips: int(toInt(res[2])), WindowLen: int(toInt(res[3])), WindowFailures: int(toInt(res[4])), ProbesInFlight: int(toInt(res[5]))}, nil
}

// RestoreOpen opens the shared circuit until retryAt with trips trips so
// far, as a state carried over from a checkpoint (not a new trip).
func (c *shared) RestoreOpen(clk clock.Clock, retryAt time.Time, trips int) (circuit.Transition, error) {
	return c.hold(clk, retryAt, circuit.ReasonRestored, max(trips, 0))
}

// Pause holds every worker's requests to the domain until until (a
// Retry-After, rounded down to the µs).
func (c *shared) Pause(clk clock.Clock, until time.Time) error {
	clk = cmp.Or(clk, clock.System)
	if now := clk.Now(); until.After(now) {
		_, err := c.run(clk, now, scriptCircuitPause, "breaker pause", 0, until.UnixMicro())
		return err
	}
	return nil
}

// HoldOpen opens the shared circuit until until (rounded up to the µs) for
// a reason found outside its window: a closed or half-open one opens with
// a new generation and cleared window, an open one stays open at least
// until then. An until not after now changes nothing.
func (c *shared) HoldOpen(clk clock.Clock, until time.Time, reason string) (circuit.Transition, error) {
	return c.hold(clk, until, reason, 0)
}

func (c *shared) hold(clk clock.Clock, until time.Time, reason string, tripsFloor int) (t circuit.Transition, _ error) {
	defer c.moved(&t)
	clk = cmp.Or(clk, clock.System)
	now := clk.Now()
	ahead := until.After(now)
	if !ahead && tripsFloor == 0 {
		return circuit.Transition{}, nil
	}
	us := until.UnixMicro()
	if until.After(time.UnixMicro(us)) {
		us++
	}
	// A restored state, a fleet-wide pause or a throttle is not a trip.
	res, err := c.run(clk, now, scriptCircuitHold, "breaker hold open", 4, us, flag(ahead), tripsFloor, flag(circuit.CountsAsTrip(reason)))
	if err != nil {
		return circuit.Transition{}, err
	}
	trips := toInt(res[2])
	c.trips.Store(trips)
	if toInt(res[0]) != 1 {
		if ahead && circuit.State(toInt(res[1])) == circuit.Open && us > c.openUntil.Load() {
			c.openUntil.Store(us)
		}
		return circuit.Transition{}, nil
	}
	evidence, err := c.evidence(res[3])
	if err != nil {
		return circuit.Transition{}, err
	}
	c.openUntil.Store(us)
	return circuit.Transition{Key: c.domain, From: circuit.State(toInt(res[1])), To: circuit.Open, At: now,
		Reason: reason, Window: evidence, FailureRate: circuit.FailureRate(evidence), MedianLatency: circuit.MedianLatency(evidence),
		RetryAt: micros(us, now), Trips: int(trips)}, nil
}

// evidence decodes a window the scripts returned.
func (c *shared) evidence(v any) ([]circuit.Result, error) {
	raw, _ := v.([]any)
	if len(raw) == 0 {
		return nil, nil
	}
	out := make([]circuit.Result, 0, len(raw))
	for _, e := range raw {
		s, _ := e.(string)
		o, ok := parseEntry(s)
		if !ok {
			return nil, fmt.Errorf("breakwater/redis: breaker for %s on crawl %q: %w: window entry %q", c.domain, c.bs.crawl, ErrCorrupt, s)
		}
		out = append(out, o)
	}
	return out, nil
}

// run calls a circuit script through the store's link (see admit); an
// answer of other than want values (0: any) is ErrCorrupt.
func (c *shared) run(clk clock.Clock, now time.Time, script *goredis.Script, op string, want int, extra ...any) ([]any, error) {
	bs := c.bs
	ok, trial, cause := bs.link.admit(now)
	if !ok {
		return nil, cause
	}
	args := append(make([]any, 0, 1+len(c.profile)+len(extra)), now.UnixMicro())
	args = append(append(args, c.profile...), extra...)
	ctx, cancel := callContext(context.Background(), bs.s.CallTimeout)
	defer cancel()
	res, err := script.Run(ctx, bs.client, c.keys, args...).Slice()
	for stale := 0; stale < staleRetries && err != nil && staleConn(err) && ctx.Err() == nil; stale++ {
		res, err = script.Run(ctx, bs.client, c.keys, args...).Slice() // on another connection
	}
	if err = wrapErr(ctx, bs.crawl, op+" for "+c.domain, err); isUnavailable(err) {
		bs.link.failed(now, clk.Now(), err, trial) // the call may have taken a while
		return nil, err
	}
	bs.link.ok(now, clk.Now())
	if c.fallback.Load() != nil {
		c.fallback.Store(nil) // Redis answers: the shared circuit rules again
	}
	if err == nil && want > 0 && len(res) != want {
		err = c.corrupt(op, len(res), want)
	}
	return res, err
}

func (c *shared) corrupt(op string, got, want int) error {
	return fmt.Errorf("breakwater/redis: %s for %s on crawl %q: %w: the script answered %d values, want %d",
		op, c.domain, c.bs.crawl, ErrCorrupt, got, want)
}

// unavailableError is a fail-closed circuit's refusal while Redis is
// unreachable: it matches ErrUnavailable and circuit.ErrOpen and converts
// to a *circuit.OpenError, so the breaker parks the request.
type unavailableError struct {
	Domain         string
	Since, RetryAt time.Time // Redis found unreachable; tried again
	Err            error     // the last failure, wrapping ErrUnavailable
}

func (e *unavailableError) Error() string {
	return fmt.Sprintf("breakwater/redis: request to %s refused: the shared breaker state is unreachable since %s and the store fails closed; Redis is tried again at %s: %v",
		e.Domain, e.Since.Format(time.RFC3339), e.RetryAt.Format(time.RFC3339Nano), e.Err)
}

// Unwrap returns the failure to reach Redis.
func (e *unavailableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, circuit.ErrOpen) true.
func (e *unavailableError) Is(target error) bool { return target == circuit.ErrOpen }

// As converts e to a *circuit.OpenError open until RetryAt.
func (e *unavailableError) As(target any) bool {
	if p, ok := target.(**circuit.OpenError); ok {
		*p = &circuit.OpenError{Key: e.Domain, State: circuit.Open, RetryAt: e.RetryAt}
		return true
	}
	return false
}

func isUnavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func ceilMicros(d time.Duration) int64 {
	us := d.Microseconds()
	if time.Duration(us)*time.Microsecond < d {
		us++
	}
	return us
}

// micros turns Unix µs (0: zero time) into a time in now's location.
func micros(us int64, now time.Time) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).In(now.Location())
}

// parseEntry reads a window entry "<class>:<latency ns>[:<seq>]".
func parseEntry(s string) (circuit.Result, bool) {
	f := strings.Split(s, ":")
	if len(f) == 2 {
		f = append(f, "0") // no seq
	}
	if len(f) != 3 {
		return circuit.Result{}, false
	}
	c, err1 := strconv.Atoi(f[0])
	ns, err2 := strconv.ParseInt(f[1], 10, 64)
	_, err3 := strconv.ParseUint(f[2], 10, 64)
	ok := err1 == nil && err2 == nil && err3 == nil && c >= 0 && c <= 255
	return circuit.Result{Class: circuit.Class(c), Latency: time.Duration(ns)}, ok
}
