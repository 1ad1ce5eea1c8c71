package checkpoint

import (
	"fmt"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/rs/zerolog"
)

// DefaultMaxAttempts is how many attempts a URL gets when
// Config.MaxAttempts is not given: a first try and two retries, each in a later run.
const DefaultMaxAttempts = 3

// DefaultGrace bounds how long a page's done record waits for the records
// of the links found on it (see Checkpoint.Flush). Only a URL Colly marked
// visited but never requested (a hop of a redirect chain) waits that long.
const DefaultGrace = 10 * time.Second

// Config configures New; a zero field keeps the default. New takes any
// number: a later Config's non-zero fields win, and OnStoreError hooks
// add up.
type Config struct {
	// MaxAttempts is how many attempts a URL gets before it is dead: each
	// attempt that left and failed (degraded, invalid, blocked, another 4xx)
	// spends one. Throttled and refused requests never spend one; a 404 or
	// 410 is dead at once. Zero means DefaultMaxAttempts; a negative
	// value is an error.
	//
	// With a breaker, attempts an outage spent do not kill a URL: one whose
	// last attempt fails while its domain's circuit is not closed, or that
	// died of failures in this run since its domain's last success and whose
	// domain's circuit then opens, is parked until the circuit's RetryAt with
	// MaxAttempts−1 attempts, so the next run gives it one more try. A URL
	// is dead when it spends its attempts while its site otherwise works.
	//
	// An outage is the breaker's to report (the run ends tripped, and a
	// rescheduled run resumes), not a person's, and a site that starts failing
	// makes a retry loop (breaker.RetryOnError) spend a few URLs' attempts back
	// to back in the moments before its circuit trips: those attempts are not
	// held against the URLs. "Since its domain's last
	// success" means the last success of an attempt that left after the URL
	// died. With a logger, each domain's revival is one event
	// (checkpoint_outage_revived, with how many URLs). The checkpoint remembers
	// up to 4096 such URLs per domain between two successes; a URL that died
	// past that stays dead (the event counts it as forgotten), for RetryDead.
	// Without a breaker there are no circuits, and a URL dies when its
	// attempts are spent.
	//
	// A URL dead of failures makes every run over the checkpoint end as an
	// error naming it by domain and cause (see Judge), until a person calls
	// RetryDead once the cause is fixed or the site is back.
	MaxAttempts int

	// Clock decides which parked URLs are eligible on resume, stamps
	// records and run metadata and bounds the grace period. Nil means the
	// system clock. (The file store's commits keep their own real-time
	// pace.)
	Clock clock.Clock

	// Logger makes the checkpoint log a resume (what was re-driven, what
	// stays parked), a store failure and a restored breaker, one event
	// each. Without it the checkpoint is silent.
	Logger zerolog.Logger

	// RunID names this run in the checkpoint's metadata. Empty means one
	// made from the start time.
	RunID string

	// Grace is how long a page's done record may wait for the records of
	// the links found on it; zero means DefaultGrace, a negative value is
	// an error.
	Grace time.Duration

	// OnStoreError is called once, when the store first fails to write
	// (disk full, a read-only file system, Redis gone). From then on the
	// checkpoint aborts every new request, since it could not record it,
	// and Judge reports the run as an error. The hook is where a program
	// stops its crawl.
	OnStoreError func(error)
}

// apply sets c's non-zero fields over o.
func (c Config) apply(o *options) error {
	if c.MaxAttempts != 0 {
		if c.MaxAttempts < 0 {
			return fmt.Errorf("%w: Config.MaxAttempts %d: want 1 or more (0 for the default, %d)", storage.ErrInvalid, c.MaxAttempts, DefaultMaxAttempts)
		}
		o.maxAttempts = c.MaxAttempts
	}
	if c.Clock != nil {
		o.clock = c.Clock
	}
	if !collyx.IsZero(c.Logger) {
		o.log = c.Logger
	}
	if c.RunID != "" {
		o.runID = c.RunID
	}
	if c.Grace != 0 {
		if c.Grace < 0 {
			return fmt.Errorf("%w: Config.Grace %v: want a positive duration", storage.ErrInvalid, c.Grace)
		}
		o.grace = c.Grace
	}
	if c.OnStoreError != nil {
		o.onStoreError = append(o.onStoreError, c.OnStoreError)
	}
	return nil
}

type options struct {
	maxAttempts  int
	clock        clock.Clock
	log          zerolog.Logger
	runID        string
	grace        time.Duration
	onStoreError []func(error)
}

func defaultOptions() options {
	return options{maxAttempts: DefaultMaxAttempts, clock: clock.System, log: zerolog.Nop(), grace: DefaultGrace}
}
