package redis

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/rs/zerolog"
)

// Defaults, used when an option is not given.
const (
	DefaultNamespace         = "bw"
	DefaultVisibilityTimeout = 5 * time.Minute
	DefaultMaxAttempts       = 5
	DefaultBackoffBase       = 15 * time.Second
	DefaultBackoffCap        = time.Hour
	defaultCriticalLead      = 24 * time.Hour
	defaultAgingBound        = time.Hour
	DefaultRetention         = 7 * 24 * time.Hour
	DefaultDeadLetterLimit   = 100_000
	DefaultCallTimeout       = 10 * time.Second
	DefaultBreakerTimeout    = time.Second
	DefaultProbeLease        = 2 * time.Minute
	DefaultReconnectBase     = 250 * time.Millisecond
	DefaultReconnectCap      = 15 * time.Second
	DefaultMaxOutage         = 10 * time.Minute
	DefaultPollInterval      = time.Second
	DefaultMaxHold           = time.Hour
	defaultPromoteBatch      = 1000
	defaultReclaimBatch      = 100
)

// Option configures any of the package's constructors: NewCollyStorage,
// NewBreakerStore and OpenCheckpoint. A Config is one. Pass the same
// options to each so that they agree on the namespace, the clock and the
// timeouts; a field a constructor has no use for is ignored by it (its doc
// says which constructors read it). A later Config's non-zero fields win.
// Options are checked once, by the constructor.
type Option interface {
	apply(*settings)
}

// optionFunc is an Option of the package's own (the tests' lanes and
// random source).
type optionFunc func(*settings)

func (f optionFunc) apply(s *settings) { f(s) }

// Config is every setting of the package's constructors. A zero field
// keeps the default, or what an earlier Config set.
type Config struct {
	// Namespace is the first part of every key, before the crawl's hash
	// tag: "<namespace>:{<crawl>}:q:ready". The braces are a Redis Cluster
	// hash tag, so a crawl's keys share one slot (the scripts touch several
	// at once) and two crawls on one Redis never see each other's state;
	// "redis-cli --scan --pattern 'bw:{<crawl>}*'" lists a crawl's keys and
	// DeleteCrawl removes them. Default "bw". Read by every constructor.
	Namespace string

	// Shards spreads the crawl over n Redis Cluster hash slots, so that n
	// masters can serve one crawl: CollyStorage's jobs and visited set by
	// a hash of the Colly request's ID, a BreakerStore's circuits by a hash
	// of the domain, each shard under a hash tag of its own,
	// "<ns>:{<crawl>/<i>.<k>}:s:…", chosen so that n shards land on n
	// masters of an evenly split cluster. Claims take the shards in turn,
	// so jobs are ordered within a shard only; Stats, QueueSize and
	// DeadLetters add the shards up. On a single Redis server shards only
	// cost round trips. The checkpoint (OpenCheckpoint) is not sharded.
	// Default (and zero) 1, the unsharded layout; n must be in [1,
	// MaxShards]. Every worker of a crawl must give the same n: like the
	// namespace, it names where the crawl is. Read by NewCollyStorage,
	// NewBreakerStore and DeleteCrawl (as its shards argument).
	Shards int

	// VisibilityTimeout is how long a claimed job stays leased to its
	// worker. A job neither acked, failed nor parked by then is taken back
	// (with one attempt spent) and claimed again. A CollyStorage extends
	// the lease of every job whose request is under way in its process
	// every third of the timeout (see MaxHold), so there it is how long
	// the jobs of a worker that died wait for the others, not a bound on a
	// fetch or on a wait at the breaker's gate. Default 5 minutes; must be
	// ≥ 1 ms.
	VisibilityTimeout time.Duration

	// MaxAttempts is how many failed attempts (Fail, or a lease that ran
	// out) send a job to the dead letters. It applies to the jobs a
	// storage queues. Default 5; must be ≥ 1.
	MaxAttempts int

	// BackoffBase and BackoffCap set the retry delay after a failure: full
	// jitter, uniform in [0, min(cap, base·2^(n-1))) after the n-th failed
	// attempt, so failures that happen together do not retry together.
	// Defaults 15 s and 1 h; base must be ≥ 1 ms and cap ≥ base.
	BackoffBase, BackoffCap time.Duration

	// Retention is the time-to-live of the crawl's keys, refreshed by
	// every call that changes the queue: a crawl nobody touches for this
	// long disappears from Redis by itself. Keep it well above the backoff
	// cap and the longest Park: a crawl whose only jobs wait longer than
	// the retention, with no other change meanwhile, expires with them.
	// Default 7 days; must be ≥ 1 s. Read by every constructor (for a
	// BreakerStore it is how long an idle domain's circuit is kept).
	Retention time.Duration

	// DeadLetterLimit caps the dead-letter set: beyond it, the oldest dead
	// letters are dropped (and logged). Default 100,000; a negative value
	// means no cap (the set then lives until the crawl's retention runs
	// out).
	DeadLetterLimit int

	// CallTimeout bounds every call to Redis when the caller's context has
	// no earlier deadline. Default 10 s, and DefaultBreakerTimeout (1 s)
	// for a BreakerStore's decisions, which a request waits for at the
	// gate; a negative value leaves calls bounded only by the caller's
	// context and the client's own timeouts. For the bound to cut a hung
	// connection short, build the client with ContextTimeoutEnabled: true
	// (otherwise its ReadTimeout applies). Read by every constructor.
	CallTimeout time.Duration

	// Clock's Now decides eligibility and leases (the waits between polls
	// and reconnects are real time). The scripts are given this time
	// rather than asking Redis, so every worker should have a synchronised
	// clock (NTP); skew of a few seconds only shifts priorities and lease
	// expiry by as much. Default (and nil): the system clock. Read by
	// NewCollyStorage and OpenCheckpoint; a BreakerStore's circuits use
	// the clock the breaker passes them.
	Clock clock.Clock

	// Logger gets one event for each thing the package decides on its
	// own: leases taken back, jobs sent to or dropped from the dead
	// letters, every change between "Redis answers" and "Redis
	// unreachable". Default: silence. Read by every constructor.
	Logger zerolog.Logger

	// FailOpen is what a BreakerStore's circuits do while Redis cannot be
	// reached. False (the default) refuses every request: Allow's error
	// matches ErrUnavailable and breaker.ErrOpen and converts to a
	// *circuit.OpenError whose RetryAt is the next connection attempt (one
	// call at a time, backing off from ReconnectBase), so the breaker parks
	// the request instead of losing it. True falls back to an in-process
	// circuit per domain (circuit.MemoryStore), started open where this
	// process last saw the shared circuit open, and dropped as soon as
	// Redis answers again. Read by NewBreakerStore.
	FailOpen bool

	// ProbeLease is how long a half-open probe holds its slot in a
	// BreakerStore's circuit without its outcome being recorded. A worker
	// that dies (or hangs) holding a probe would otherwise keep the domain
	// half-open with no slot free forever; after the lease the slot is
	// free again. Set it above the longest request. Default 2 minutes;
	// must be ≥ 1 ms. Read by NewBreakerStore.
	ProbeLease time.Duration

	// ReconnectBase and ReconnectCap set the wait between tries while
	// Redis is unreachable: base after the first failure, doubling up to
	// cap, each wait jittered over its upper half so that workers do not
	// retry in step. Defaults 250 ms and 15 s; base must be ≥ 1 ms and
	// cap ≥ base. Read by NewBreakerStore and NewCollyStorage.
	ReconnectBase, ReconnectCap time.Duration

	// MaxOutage is how long a CollyStorage call keeps retrying while Redis
	// is unreachable before it returns the error: Colly's queue ignores
	// errors from GetRequest and ends its Run on one from QueueSize, so
	// the storage pauses the crawl instead, up to this long. Default 10
	// minutes; a negative value waits for as long as it takes. Read by
	// NewCollyStorage.
	MaxOutage time.Duration

	// ClaimTTL is how long IsVisited's claim on a URL fetched outside the
	// queue (a plain Visit) keeps other workers off it when nobody reports
	// its outcome. A URL whose outcome is reported is done (Ack) or
	// released (Fail, Park) at once. Default: the visibility timeout; must
	// be ≥ 1 ms. Read by NewCollyStorage.
	ClaimTTL time.Duration

	// PollInterval is the longest a CollyStorage's GetRequest waits
	// before it asks the queue again when no job is ready but some are
	// delayed or in flight elsewhere. Default 1 s; must be ≥ 1 ms. Read by
	// NewCollyStorage.
	PollInterval time.Duration

	// WaitHorizon makes a CollyStorage's crawl end when the only work
	// left is delayed beyond it from now (a long cooldown or backoff):
	// QueueSize does not count those jobs and GetRequest reports the queue
	// drained, so Colly's Run returns and the jobs stay queued for the
	// next run. Zero (the default) waits for every job, so a domain that
	// never recovers keeps the crawl going (parking spends no attempt). A
	// negative value is a horizon of zero. Read by NewCollyStorage.
	WaitHorizon time.Duration

	// MaxHold bounds how long a CollyStorage keeps extending the lease of
	// a job whose request is under way in its process: one whose outcome
	// is never reported (no breaker hooks, no Ack, Fail or Park) comes
	// back to the other workers after this plus the visibility timeout.
	// Set it above the longest a request can take, waits at the gate
	// included (the breaker honours a Retry-After of up to 10 minutes,
	// once per throttled retry). Default 1 hour; a negative value means no
	// limit. Read by NewCollyStorage.
	MaxHold time.Duration
}

// apply sets c's non-zero fields over s, and notes the ones out of range.
func (c Config) apply(s *settings) {
	if c.Namespace != "" {
		if err := checkName("namespace", c.Namespace); err != nil {
			s.errs = append(s.errs, err)
		}
		s.namespace = c.Namespace
	}
	if c.Shards != 0 {
		if c.Shards < 1 || c.Shards > MaxShards {
			s.bad("Config.Shards %d: must be in [1, %d]", c.Shards, MaxShards)
		}
		s.shards = c.Shards
	}
	s.atLeast("VisibilityTimeout", c.VisibilityTimeout, time.Millisecond, &s.visibility)
	if c.MaxAttempts != 0 {
		if c.MaxAttempts < 1 {
			s.bad("Config.MaxAttempts %d: must be at least 1", c.MaxAttempts)
		}
		s.maxAttempts = c.MaxAttempts
	}
	s.backoff("Backoff", c.BackoffBase, c.BackoffCap, &s.backoffBase, &s.backoffCap)
	s.atLeast("Retention", c.Retention, time.Second, &s.retention)
	if c.DeadLetterLimit != 0 {
		s.deadLimit = max(c.DeadLetterLimit, 0) // negative: no cap, 0 inside
	}
	if c.CallTimeout != 0 {
		s.callTimeout = c.CallTimeout
		s.timeoutSet = true
	}
	if c.Clock != nil {
		s.now = c.Clock.Now
	}
	if !collyx.IsZero(c.Logger) {
		s.log = c.Logger
	}
	if c.FailOpen {
		s.failOpen = true
	}
	s.atLeast("ProbeLease", c.ProbeLease, time.Millisecond, &s.probeLease)
	s.backoff("Reconnect", c.ReconnectBase, c.ReconnectCap, &s.reconnectBase, &s.reconnectCap)
	if c.MaxOutage != 0 {
		s.maxOutage = c.MaxOutage
	}
	s.atLeast("ClaimTTL", c.ClaimTTL, time.Millisecond, &s.claimTTL)
	s.atLeast("PollInterval", c.PollInterval, time.Millisecond, &s.pollInterval)
	if c.WaitHorizon != 0 {
		s.horizon = max(c.WaitHorizon, 0) // negative: a horizon of zero
	}
	if c.MaxHold != 0 {
		s.maxHold = c.MaxHold
	}
}

type settings struct {
	namespace    string
	shards       int
	visibility   time.Duration
	maxAttempts  int
	backoffBase  time.Duration
	backoffCap   time.Duration
	criticalLead time.Duration
	agingBound   time.Duration
	retention    time.Duration
	deadLimit    int
	callTimeout  time.Duration
	timeoutSet   bool // Config.CallTimeout was given (the breaker's default is shorter)
	promoteBatch int
	reclaimBatch int
	now          func() time.Time
	rand         *rand.Rand
	log          zerolog.Logger
	errs         []error

	// BreakerStore
	failOpen      bool
	probeLease    time.Duration
	reconnectBase time.Duration
	reconnectCap  time.Duration

	// CollyStorage
	maxOutage    time.Duration
	claimTTL     time.Duration // 0: the visibility timeout
	pollInterval time.Duration
	horizon      time.Duration // < 0: wait for every delayed job
	maxHold      time.Duration // < 0: no limit
}

func defaults() settings {
	return settings{
		namespace:    DefaultNamespace,
		shards:       1,
		visibility:   DefaultVisibilityTimeout,
		maxAttempts:  DefaultMaxAttempts,
		backoffBase:  DefaultBackoffBase,
		backoffCap:   DefaultBackoffCap,
		criticalLead: defaultCriticalLead,
		agingBound:   defaultAgingBound,
		retention:    DefaultRetention,
		deadLimit:    DefaultDeadLetterLimit,
		callTimeout:  DefaultCallTimeout,
		promoteBatch: defaultPromoteBatch,
		reclaimBatch: defaultReclaimBatch,
		now:          time.Now,
		log:          zerolog.Nop(),

		probeLease:    DefaultProbeLease,
		reconnectBase: DefaultReconnectBase,
		reconnectCap:  DefaultReconnectCap,
		maxOutage:     DefaultMaxOutage,
		pollInterval:  DefaultPollInterval,
		horizon:       -1,
		maxHold:       DefaultMaxHold,
	}
}

func (s *settings) bad(format string, args ...any) {
	s.errs = append(s.errs, fmt.Errorf(format, args...))
}

// atLeast sets *dst to v (Config's field name) when v is non-zero, and
// notes a v below least.
func (s *settings) atLeast(name string, v, least time.Duration, dst *time.Duration) {
	if v == 0 {
		return
	}
	if v < least {
		s.bad("Config.%s %v: must be at least %v", name, v, least)
	}
	*dst = v
}

// backoff sets a base/cap pair (Config's <name>Base and <name>Cap) from
// its non-zero fields, and notes a pair out of range: base ≥ 1ms, cap ≥
// base.
func (s *settings) backoff(name string, base, limit time.Duration, sBase, sCap *time.Duration) {
	if base == 0 && limit == 0 {
		return
	}
	if base != 0 {
		*sBase = base
	}
	if limit != 0 {
		*sCap = limit
	}
	if *sBase < time.Millisecond || *sCap < *sBase {
		s.bad("Config.%sBase %v, %sCap %v: need base ≥ 1ms and cap ≥ base", name, *sBase, name, *sCap)
	}
}

// withAging sets the lanes' offsets on the ready order, whose score is the
// time a job became eligible plus its lane's offset. criticalLead is how far
// ahead a critical job starts: a normal job must have waited longer than it
// to beat a fresh critical one. agingBound is how far behind a bulk job
// starts: a bulk job that has waited longer than it beats a fresh normal
// one, so bulk work never starves. Defaults 24 h and 1 h; both must be ≥ 0
// and below 10 years. All workers of one crawl must use the same values.
func withAging(criticalLead, agingBound time.Duration) Option {
	return optionFunc(func(s *settings) {
		const most = 10 * 365 * 24 * time.Hour
		if criticalLead < 0 || agingBound < 0 || criticalLead > most || agingBound > most {
			s.bad("aging: critical lead %v, aging bound %v: each must be in [0, 10 years]", criticalLead, agingBound)
		}
		s.criticalLead, s.agingBound = criticalLead, agingBound
	})
}

// withRand sets the random source of the backoff jitter; the queue
// serialises its use. Default: math/rand/v2's global source.
func withRand(r *rand.Rand) Option {
	return optionFunc(func(s *settings) {
		if r == nil {
			s.bad("rand: nil")
		}
		s.rand = r
	})
}

// build applies opts over the defaults and checks the client and the crawl
// id, for every constructor.
func build(client any, crawlID string, opts []Option) (settings, error) {
	s := defaults()
	for _, o := range opts {
		if o != nil {
			o.apply(&s)
		}
	}
	if client == nil {
		s.bad("redis client is nil")
	}
	if err := checkName("crawl id", crawlID); err != nil {
		s.errs = append(s.errs, err)
	}
	if len(s.errs) > 0 {
		return s, fmt.Errorf("breakwater/redis: %w: %w", ErrInvalidConfig, errors.Join(s.errs...))
	}
	return s, nil
}

// checkName rejects names that would break the key layout: a brace would
// change the Redis Cluster hash tag, and glob characters would make
// prefix-based cleanup (SCAN MATCH) hit other keys.
func checkName(what, v string) error {
	if v == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if len(v) > 200 {
		return fmt.Errorf("%s %.40q…: longer than 200 bytes", what, v)
	}
	if i := strings.IndexAny(v, "{}*?[]\\ \t\r\n"); i >= 0 {
		return fmt.Errorf("%s %q: must not contain %q (braces, glob characters and spaces are reserved)", what, v, v[i])
	}
	return nil
}
