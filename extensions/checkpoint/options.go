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

// Defaults for Config's zero fields.
const (
	DefaultMaxAttempts = 3 // a try and two retries
	DefaultGrace       = 10 * time.Second
)

// Config configures New; a zero field keeps the default, a negative one
// is an error.
type Config struct {
	// MaxAttempts is how many failed attempts (degraded, invalid, blocked,
	// other 4xx) make a URL dead (DefaultMaxAttempts). Throttled and
	// refused requests spend none; a 404 or 410 is dead at once. With a
	// breaker an outage parks instead of killing, at most three times
	// (docs/checkpoints.md). A URL dead of failures makes every run an
	// error (Judge) until RetryDead.
	MaxAttempts int

	// Clock stamps records and times eligibility and grace (nil: system).
	Clock clock.Clock

	// Logger logs a resume, a store failure and a restored breaker.
	Logger zerolog.Logger

	// RunID names this run in the metadata; empty means one from the time.
	RunID string

	// Grace is how long a page's done record may wait for the records of
	// the links found on it (DefaultGrace).
	Grace time.Duration

	// OnStoreError is called once, when the store first fails; from then
	// on every new request is aborted and Judge reports an error.
	OnStoreError func(error)
}

// resolve returns c with the defaults in its zero fields.
func resolve(c Config) (Config, error) {
	o := Config{MaxAttempts: DefaultMaxAttempts, Clock: clock.System, Logger: zerolog.Nop(), Grace: DefaultGrace, OnStoreError: c.OnStoreError}
	if c.MaxAttempts < 0 {
		return o, fmt.Errorf("%w: Config.MaxAttempts %d: want 1 or more (0 for the default, %d)", storage.ErrInvalid, c.MaxAttempts, DefaultMaxAttempts)
	}
	if c.Grace < 0 {
		return o, fmt.Errorf("%w: Config.Grace %v: want a positive duration", storage.ErrInvalid, c.Grace)
	}
	o.MaxAttempts = cmp.Or(c.MaxAttempts, o.MaxAttempts)
	o.Clock = cmp.Or(c.Clock, o.Clock)
	if !collyx.IsZero(c.Logger) {
		o.Logger = c.Logger
	}
	o.RunID = cmp.Or(c.RunID, o.RunID)
	o.Grace = cmp.Or(c.Grace, o.Grace)
	return o, nil
}
