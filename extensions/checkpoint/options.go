package checkpoint

import (
	"cmp"
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
// of the links found on it (see Checkpoint.Flush).
const DefaultGrace = 10 * time.Second

// Config configures New; a zero field keeps the default, a negative one
// is an error. New takes any number: a later Config's non-zero fields
// win, and OnStoreError hooks add up.
type Config struct {
	// MaxAttempts is how many attempts a URL gets before it is dead
	// (DefaultMaxAttempts): each attempt that left and failed (degraded,
	// invalid, blocked, another 4xx) spends one. Throttled and refused
	// requests spend none; a 404 or 410 is dead at once.
	//
	// With a breaker, an outage does not kill URLs: one whose last attempt
	// fails while its domain's circuit is not closed, or that died of
	// failures in this run since its domain's last success when the
	// circuit opens, is parked until RetryAt with MaxAttempts−1 attempts,
	// at most three times (logged as checkpoint_outage_revived). A URL dead
	// of failures makes every run end as an error (see Judge) until
	// RetryDead is called.
	MaxAttempts int

	// Clock decides which parked URLs are eligible on resume, stamps
	// records and run metadata and bounds the grace period. Nil means the
	// system clock.
	Clock clock.Clock

	// Logger makes the checkpoint log a resume, a store failure and a
	// restored breaker, one event each. Without it the checkpoint is
	// silent.
	Logger zerolog.Logger

	// RunID names this run in the checkpoint's metadata. Empty means one
	// made from the start time.
	RunID string

	// Grace is how long a page's done record may wait for the records of
	// the links found on it (DefaultGrace).
	Grace time.Duration

	// OnStoreError is called once, when the store first fails to write.
	// From then on the checkpoint aborts every new request and Judge
	// reports an error: the hook is where a program stops its crawl.
	OnStoreError func(error)
}

// resolve returns the defaults with cfg's non-zero fields over them, and
// every OnStoreError hook.
func resolve(cfg []Config) (Config, []func(error), error) {
	o := Config{MaxAttempts: DefaultMaxAttempts, Clock: clock.System, Logger: zerolog.Nop(), Grace: DefaultGrace}
	var hooks []func(error)
	for _, c := range cfg {
		if c.MaxAttempts < 0 {
			return o, nil, fmt.Errorf("%w: Config.MaxAttempts %d: want 1 or more (0 for the default, %d)", storage.ErrInvalid, c.MaxAttempts, DefaultMaxAttempts)
		}
		if c.Grace < 0 {
			return o, nil, fmt.Errorf("%w: Config.Grace %v: want a positive duration", storage.ErrInvalid, c.Grace)
		}
		o.MaxAttempts = cmp.Or(c.MaxAttempts, o.MaxAttempts)
		o.Clock = cmp.Or(c.Clock, o.Clock)
		if !collyx.IsZero(c.Logger) {
			o.Logger = c.Logger
		}
		o.RunID = cmp.Or(c.RunID, o.RunID)
		o.Grace = cmp.Or(c.Grace, o.Grace)
		if c.OnStoreError != nil {
			hooks = append(hooks, c.OnStoreError)
		}
	}
	return o, hooks, nil
}
