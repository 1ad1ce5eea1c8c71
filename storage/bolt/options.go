package bolt

import (
	"cmp"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/storage"
)

// Defaults for Config's zero fields.
const (
	DefaultFlushInterval = 50 * time.Millisecond
	DefaultBatchSize     = 10000
	DefaultLockTimeout   = time.Second
)

// Config configures Open; a zero field keeps the default, a negative one
// is rejected.
type Config struct {
	// FlushInterval is how long a Put may wait for its commit (DefaultFlushInterval).
	FlushInterval time.Duration

	// BatchSize is how many buffered writes start a commit early
	// (DefaultBatchSize); Put blocks at four times as many.
	BatchSize int

	// LockTimeout is how long Open waits for a lock before storage.ErrLocked
	// (DefaultLockTimeout).
	LockTimeout time.Duration

	// Verify makes Open also check bbolt's pages and decode everything (slower).
	Verify bool

	// Logger logs a failed commit; without it the store is silent.
	Logger zerolog.Logger

	// Clock paces commits and stamps Updated when a Put leaves it zero;
	// nil is the system clock.
	Clock clock.Clock
}

// resolve returns c with the defaults in its zero fields.
func resolve(c Config) (Config, error) {
	if c.FlushInterval < 0 || c.BatchSize < 0 || c.LockTimeout < 0 {
		return c, fmt.Errorf("%w: storage/bolt: negative FlushInterval (%v), BatchSize (%d) or LockTimeout (%v)",
			storage.ErrInvalid, c.FlushInterval, c.BatchSize, c.LockTimeout)
	}
	c.FlushInterval = cmp.Or(c.FlushInterval, DefaultFlushInterval)
	c.BatchSize = cmp.Or(c.BatchSize, DefaultBatchSize)
	c.LockTimeout = cmp.Or(c.LockTimeout, DefaultLockTimeout)
	if collyx.IsZero(c.Logger) {
		c.Logger = zerolog.Nop()
	}
	c.Clock = cmp.Or(c.Clock, clock.System)
	return c, nil
}
