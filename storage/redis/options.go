package redis

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	goredis "github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Defaults of the Config fields other packages build on.
const (
	DefaultNamespace         = "bw"
	DefaultVisibilityTimeout = 5 * time.Minute
	DefaultMaxAttempts       = 5
)

// Config is every setting of NewCollyStorage, NewBreakerStore and
// OpenCheckpoint: pass the same to each. A zero field keeps the default.
type Config struct {
	// Namespace starts every key: "<ns>:{<crawl>}:…". Default "bw".
	Namespace string

	// Shards spreads the crawl over n hash slots, one per master of an evenly
	// split Cluster (jobs are then ordered within a shard only; the checkpoint
	// is not). Every worker must give the same n. Default 1; in [1, MaxShards].
	Shards int

	// VisibilityTimeout is how long a claimed job stays leased (extended while
	// under way) before it is taken back, one attempt spent, and how long
	// IsVisited's claim on a URL fetched outside the queue holds. Default 5
	// min; ≥ 1 ms.
	VisibilityTimeout time.Duration

	// MaxAttempts is how many failed attempts (Fail, or a lease that ran out)
	// send a job to the dead letters. Default 5; ≥ 1.
	MaxAttempts int

	// BackoffBase and BackoffCap set the retry delay after the n-th failure:
	// full jitter in [0, min(cap, base·2^(n-1))). Defaults 15 s and 1 h;
	// base ≥ 1 ms, cap ≥ base.
	BackoffBase, BackoffCap time.Duration

	// Retention is the time-to-live of the crawl's keys, refreshed by every
	// change (keep it above the backoff cap and the longest Park), and of an
	// idle domain's circuit. Default 7 days; ≥ 1 s.
	Retention time.Duration

	// DeadLetterLimit caps the dead letters; the oldest beyond it are dropped
	// and logged. Default 100,000; negative is no cap.
	DeadLetterLimit int

	// CallTimeout bounds every call to Redis (build the client with
	// ContextTimeoutEnabled). Default 10 s, 1 s for NewBreakerStore; negative: none.
	CallTimeout time.Duration

	// Clock decides eligibility and leases, so workers need synchronised
	// clocks. Default the system clock; circuits use the breaker's clock.
	Clock clock.Clock

	// Logger gets an event for each thing the package decides on its own:
	// leases taken back, dead letters, Redis lost and back. Default: silence.
	Logger zerolog.Logger

	// FailOpen makes NewBreakerStore's circuits fall back to an in-process one
	// per domain while Redis is unreachable; by default they refuse every
	// request (ErrUnavailable, breaker.ErrOpen), so it is parked.
	FailOpen bool

	// ProbeLease is how long a half-open probe holds its slot when its outcome
	// never comes: above the longest request. Default 2 minutes; ≥ 1 ms.
	ProbeLease time.Duration

	// ReconnectBase and ReconnectCap set the jittered, doubling wait between
	// tries while Redis is unreachable. Defaults 250 ms, 15 s; as BackoffBase.
	ReconnectBase, ReconnectCap time.Duration

	// MaxOutage is how long a CollyStorage call keeps retrying while Redis is
	// unreachable. Default 10 minutes; negative: for ever.
	MaxOutage time.Duration

	// PollInterval is the longest GetRequest waits before asking again when
	// no job is ready. Default 1 s; ≥ 1 ms.
	PollInterval time.Duration

	// WaitHorizon ends a CollyStorage's crawl when the only work left is
	// delayed beyond it; those jobs stay queued for the next run. Zero (the
	// default) waits for every job; negative is a horizon of zero.
	WaitHorizon time.Duration

	// MaxHold bounds how long the lease of a job under way here is extended:
	// above the longest request and its waits. Default 1 h; negative: no limit.
	MaxHold time.Duration

	// set applies a setting of the package's own (the tests' knobs).
	set func(*settings)
}

// apply sets c's non-zero fields over s, noting the ones out of range.
func (c Config) apply(s *settings) {
	if c.Namespace != "" {
		s.checkName("namespace", c.Namespace)
		s.Namespace = c.Namespace
	}
	if c.Shards < 0 || c.Shards > MaxShards {
		s.bad("Config.Shards %d: must be in [1, %d]", c.Shards, MaxShards)
	}
	s.Shards = cmp.Or(c.Shards, s.Shards)
	atLeast(s, "VisibilityTimeout", c.VisibilityTimeout, time.Millisecond, &s.VisibilityTimeout)
	atLeast(s, "MaxAttempts", c.MaxAttempts, 1, &s.MaxAttempts)
	s.backoff("Backoff", c.BackoffBase, c.BackoffCap, &s.BackoffBase, &s.BackoffCap)
	atLeast(s, "Retention", c.Retention, time.Second, &s.Retention)
	if c.DeadLetterLimit != 0 {
		s.DeadLetterLimit = max(c.DeadLetterLimit, 0) // negative: no cap, 0 inside
	}
	s.CallTimeout = cmp.Or(c.CallTimeout, s.CallTimeout)
	if c.Clock != nil {
		s.now = c.Clock.Now
	}
	if !reflect.ValueOf(c.Logger).IsZero() { // given: a zerolog.Logger cannot be compared
		s.Logger = c.Logger
	}
	s.FailOpen = s.FailOpen || c.FailOpen
	atLeast(s, "ProbeLease", c.ProbeLease, time.Millisecond, &s.ProbeLease)
	s.backoff("Reconnect", c.ReconnectBase, c.ReconnectCap, &s.ReconnectBase, &s.ReconnectCap)
	atLeast(s, "PollInterval", c.PollInterval, time.Millisecond, &s.PollInterval)
	if c.WaitHorizon != 0 {
		s.WaitHorizon = max(c.WaitHorizon, 0) // negative: a horizon of zero
	}
	s.MaxOutage = cmp.Or(c.MaxOutage, s.MaxOutage)
	s.MaxHold = cmp.Or(c.MaxHold, s.MaxHold)
	if c.set != nil {
		c.set(s)
	}
}

// settings is the constructors' Config, defaults filled in. Inside,
// DeadLetterLimit 0 is no cap and a negative WaitHorizon waits for every
// job.
type settings struct {
	Config
	now  func() time.Time
	rand *rand.Rand
	errs []error
}

// build applies c over the defaults and checks client and crawl id;
// the settings valid, it warns of a client whose deadlines cannot cut a
// hung connection short.
func build(client any, crawlID string, c Config) (settings, error) {
	s := settings{now: time.Now, Config: Config{
		Namespace:         DefaultNamespace,
		Shards:            1,
		VisibilityTimeout: DefaultVisibilityTimeout,
		MaxAttempts:       DefaultMaxAttempts,
		BackoffBase:       15 * time.Second,
		BackoffCap:        time.Hour,
		Retention:         7 * 24 * time.Hour,
		DeadLetterLimit:   100_000,
		CallTimeout:       10 * time.Second,
		Logger:            zerolog.Nop(),
		ProbeLease:        2 * time.Minute,
		ReconnectBase:     250 * time.Millisecond,
		ReconnectCap:      15 * time.Second,
		MaxOutage:         10 * time.Minute,
		PollInterval:      time.Second,
		WaitHorizon:       -1,
		MaxHold:           time.Hour,
	}}
	c.apply(&s)
	if client == nil {
		s.bad("redis client is nil")
	}
	s.checkName("crawl id", crawlID)
	if len(s.errs) > 0 {
		return s, fmt.Errorf("breakwater/redis: %w: %w", ErrInvalidConfig, errors.Join(s.errs...))
	}
	on, read := true, time.Duration(0)
	switch c := client.(type) {
	case *goredis.Client:
		on, read = c.Options().ContextTimeoutEnabled, c.Options().ReadTimeout
	case *goredis.ClusterClient:
		on, read = c.Options().ContextTimeoutEnabled, c.Options().ReadTimeout
	}
	if !on && s.CallTimeout > 0 {
		s.Logger.Warn().Str("crawl", crawlID).Dur("read_timeout", read).
			Msg("redis client has ContextTimeoutEnabled off: a hung Redis blocks a call for the client's ReadTimeout, not the call timeout")
	}
	return s, nil
}

func (s *settings) bad(format string, args ...any) {
	s.errs = append(s.errs, fmt.Errorf(format, args...))
}

// atLeast sets *dst to a non-zero v, noting a v below least.
func atLeast[T int | time.Duration](s *settings, name string, v, least T, dst *T) {
	if v != 0 && v < least {
		s.bad("Config.%s %v: must be at least %v", name, v, least)
	}
	*dst = cmp.Or(v, *dst)
}

// backoff sets a base/cap pair from its non-zero fields.
func (s *settings) backoff(name string, base, limit time.Duration, sBase, sCap *time.Duration) {
	if base == 0 && limit == 0 {
		return
	}
	*sBase, *sCap = cmp.Or(base, *sBase), cmp.Or(limit, *sCap)
	if *sBase < time.Millisecond || *sCap < *sBase {
		s.bad("Config.%sBase %v, %sCap %v: need base ≥ 1ms and cap ≥ base", name, *sBase, name, *sCap)
	}
}

// checkName rejects names that would break the key layout: a brace would
// change the hash tag, glob characters the SCAN MATCH of DeleteCrawl.
func (s *settings) checkName(what, v string) {
	if v == "" {
		s.bad("%s is empty", what)
	} else if len(v) > 200 {
		s.bad("%s %.40q…: longer than 200 bytes", what, v)
	} else if i := strings.IndexAny(v, "{}*?[]\\ \t\r\n"); i >= 0 {
		s.bad("%s %q: must not contain %q (braces, glob characters and spaces are reserved)", what, v, v[i])
	}
}
