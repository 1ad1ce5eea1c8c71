package redis

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Defaults, used when an option is not given.
const (
	DefaultNamespace         = "bw"
	DefaultVisibilityTimeout = 5 * time.Minute
	DefaultMaxAttempts       = 5
	DefaultBackoffBase       = 15 * time.Second
	DefaultBackoffCap        = time.Hour
	DefaultCriticalLead      = 24 * time.Hour
	DefaultAgingBound        = time.Hour
	DefaultRetention         = 7 * 24 * time.Hour
	DefaultDeadLetterLimit   = 100_000
	DefaultCallTimeout       = 10 * time.Second
	defaultPromoteBatch      = 1000
	defaultReclaimBatch      = 100
)

// QueueOption configures a Queue. Options are checked once, by NewQueue.
type QueueOption func(*settings)

type settings struct {
	namespace    string
	visibility   time.Duration
	maxAttempts  int
	backoffBase  time.Duration
	backoffCap   time.Duration
	criticalLead time.Duration
	agingBound   time.Duration
	retention    time.Duration
	deadLimit    int
	callTimeout  time.Duration
	promoteBatch int
	reclaimBatch int
	now          func() time.Time
	rand         *rand.Rand
	log          zerolog.Logger
	errs         []error
}

func defaults() settings {
	return settings{
		namespace:    DefaultNamespace,
		visibility:   DefaultVisibilityTimeout,
		maxAttempts:  DefaultMaxAttempts,
		backoffBase:  DefaultBackoffBase,
		backoffCap:   DefaultBackoffCap,
		criticalLead: DefaultCriticalLead,
		agingBound:   DefaultAgingBound,
		retention:    DefaultRetention,
		deadLimit:    DefaultDeadLetterLimit,
		callTimeout:  DefaultCallTimeout,
		promoteBatch: defaultPromoteBatch,
		reclaimBatch: defaultReclaimBatch,
		now:          time.Now,
		log:          zerolog.Nop(),
	}
}

func (s *settings) bad(format string, args ...any) {
	s.errs = append(s.errs, fmt.Errorf(format, args...))
}

// WithNamespace sets the first part of every key, before the crawl's hash
// tag: "<namespace>:{<crawl>}:q:ready". Default "bw". Give tests their own
// namespace so their keys can be found and deleted together.
func WithNamespace(ns string) QueueOption {
	return func(s *settings) {
		if err := checkName("namespace", ns); err != nil {
			s.errs = append(s.errs, err)
		}
		s.namespace = ns
	}
}

// WithVisibilityTimeout sets how long a claimed job stays leased to its
// worker. A job neither acked, failed nor parked by then is taken back (with
// one attempt spent) and claimed again. Set it above your longest fetch plus
// processing time, or call Extend. Default 5 minutes; must be ≥ 1 ms.
func WithVisibilityTimeout(d time.Duration) QueueOption {
	return func(s *settings) {
		if d < time.Millisecond {
			s.bad("visibility timeout %v: must be at least 1ms", d)
		}
		s.visibility = d
	}
}

// WithMaxAttempts sets the MaxAttempts given to jobs enqueued without one.
// Default 5; must be ≥ 1.
func WithMaxAttempts(n int) QueueOption {
	return func(s *settings) {
		if n < 1 {
			s.bad("max attempts %d: must be at least 1", n)
		}
		s.maxAttempts = n
	}
}

// WithBackoff sets the retry delay after a failure: full jitter, uniform in
// [0, min(cap, base·2^(n-1))) after the n-th failed attempt. Defaults 15 s
// and 1 h; base must be ≥ 1 ms and cap ≥ base.
func WithBackoff(base, cap time.Duration) QueueOption {
	return func(s *settings) {
		if base < time.Millisecond || cap < base {
			s.bad("backoff base %v, cap %v: need base ≥ 1ms and cap ≥ base", base, cap)
		}
		s.backoffBase, s.backoffCap = base, cap
	}
}

// WithAging sets the lanes' offsets on the ready order, whose score is the
// time a job became eligible plus its lane's offset. criticalLead is how far
// ahead a critical job starts: a normal job must have waited longer than it
// to beat a fresh critical one. agingBound is how far behind a bulk job
// starts: a bulk job that has waited longer than it beats a fresh normal
// one, so bulk work never starves. Defaults 24 h and 1 h; both must be ≥ 0
// and below 10 years. All workers of one crawl must use the same values.
func WithAging(criticalLead, agingBound time.Duration) QueueOption {
	return func(s *settings) {
		const most = 10 * 365 * 24 * time.Hour
		if criticalLead < 0 || agingBound < 0 || criticalLead > most || agingBound > most {
			s.bad("aging: critical lead %v, aging bound %v: each must be in [0, 10 years]", criticalLead, agingBound)
		}
		s.criticalLead, s.agingBound = criticalLead, agingBound
	}
}

// WithRetention sets the time-to-live of the crawl's keys, refreshed by
// every call that changes the queue: a crawl nobody touches for this long
// disappears from Redis by itself. Keep it well above the backoff cap and
// the longest Park: a crawl whose only jobs wait longer than the retention,
// with no other change meanwhile, expires with them. Default 7 days; must
// be ≥ 1 s.
func WithRetention(d time.Duration) QueueOption {
	return func(s *settings) {
		if d < time.Second {
			s.bad("retention %v: must be at least 1s", d)
		}
		s.retention = d
	}
}

// WithDeadLetterLimit caps the dead-letter set: beyond n, the oldest dead
// letters are dropped (and logged). Default 100,000; 0 means no cap (the set
// then lives until the crawl's retention runs out).
func WithDeadLetterLimit(n int) QueueOption {
	return func(s *settings) {
		if n < 0 {
			s.bad("dead-letter limit %d: must be ≥ 0", n)
		}
		s.deadLimit = n
	}
}

// WithCallTimeout bounds every call to Redis when the caller's context has
// no earlier deadline. Default 10 s; a negative value leaves calls bounded
// only by the caller's context and the client's own timeouts. For the bound
// to cut a hung connection short, build the client with
// ContextTimeoutEnabled: true (otherwise its ReadTimeout applies).
func WithCallTimeout(d time.Duration) QueueOption {
	return func(s *settings) {
		if d == 0 {
			s.bad("call timeout 0: use a negative value for no timeout")
		}
		s.callTimeout = d
	}
}

// WithClock sets the clock that decides eligibility, leases and aging. The
// scripts are given this time rather than asking Redis, so every worker
// should have a synchronised clock (NTP); skew of a few seconds only shifts
// priorities and lease expiry by as much. Default time.Now.
func WithClock(now func() time.Time) QueueOption {
	return func(s *settings) {
		if now == nil {
			s.bad("clock: nil")
		}
		s.now = now
	}
}

// WithRand sets the random source of the backoff jitter; the queue
// serialises its use. Default: math/rand/v2's global source.
func WithRand(r *rand.Rand) QueueOption {
	return func(s *settings) {
		if r == nil {
			s.bad("rand: nil")
		}
		s.rand = r
	}
}

// WithLogger makes the queue log what it decides on its own: leases taken
// back, jobs sent to the dead letters, dead letters dropped over the limit.
// Default: silence.
func WithLogger(l zerolog.Logger) QueueOption {
	return func(s *settings) { s.log = l }
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
