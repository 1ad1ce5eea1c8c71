package bolt

import (
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

// Config configures Open; a zero field keeps the default, a negative
// one is rejected. Open takes any number: a later Config's non-zero
// fields win.
type Config struct {
	// FlushInterval is how long a Put may wait in memory before the
	// background commit makes it durable (DefaultFlushInterval).
	FlushInterval time.Duration

	// BatchSize is how many buffered records and metadata entries start a
	// commit before the interval is up (DefaultBatchSize). Put blocks
	// while four times as many are buffered and a commit is running.
	BatchSize int

	// LockTimeout is how long Open waits for another process to release
	// the file before it returns storage.ErrLocked (DefaultLockTimeout).
	LockTimeout time.Duration

	// Verify makes Open also run bbolt's page check and decode every
	// record and request against the indexes: several times slower.
	Verify bool

	// Logger logs a failed commit (once: the error is sticky). Without it
	// the store is silent.
	Logger zerolog.Logger

	// Clock paces background commits and stamps Updated on records Put
	// without one. Nil means the system clock.
	Clock clock.Clock
}

// apply sets c's non-zero fields over o, and notes the first one out of
// range.
func (c Config) apply(o *options) {
	setPositive(o, &o.flushInterval, c.FlushInterval, "flush interval")
	setPositive(o, &o.batchSize, c.BatchSize, "batch size")
	setPositive(o, &o.lockTimeout, c.LockTimeout, "lock timeout")
	o.verify = o.verify || c.Verify
	if !collyx.IsZero(c.Logger) {
		o.log = c.Logger
	}
	if c.Clock != nil {
		o.clock = c.Clock
	}
}

type options struct {
	flushInterval time.Duration
	batchSize     int
	lockTimeout   time.Duration
	verify        bool
	log           zerolog.Logger
	clock         clock.Clock
	err           error
}

func newOptions(cfg []Config) (options, error) {
	o := options{flushInterval: DefaultFlushInterval, batchSize: DefaultBatchSize,
		lockTimeout: DefaultLockTimeout, log: zerolog.Nop()}
	for _, c := range cfg {
		c.apply(&o)
	}
	o.clock = clock.OrSystem(o.clock)
	return o, o.err
}

// setPositive sets *dst to v unless v is zero, noting a negative v.
func setPositive[T int | time.Duration](o *options, dst *T, v T, what string) {
	if v < 0 {
		o.reject("negative %s %v", what, v)
	}
	if v != 0 {
		*dst = v
	}
}

func (o *options) reject(format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf("%w: storage/bolt: "+format, append([]any{storage.ErrInvalid}, args...)...)
	}
}
