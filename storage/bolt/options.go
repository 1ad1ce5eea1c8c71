package bolt

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/storage"
)

// Defaults for the options.
const (
	DefaultFlushInterval = 50 * time.Millisecond
	DefaultBatchSize     = 10000
	DefaultLockTimeout   = time.Second
)

// An Option configures Open.
type Option func(*options)

type options struct {
	flushInterval time.Duration
	batchSize     int
	lockTimeout   time.Duration
	verify        bool
	log           zerolog.Logger
	clock         clock.Clock
	err           error
}

func newOptions(opts []Option) (options, error) {
	o := options{log: zerolog.Nop()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.err != nil {
		return o, o.err
	}
	if o.flushInterval == 0 {
		o.flushInterval = DefaultFlushInterval
	}
	if o.batchSize == 0 {
		o.batchSize = DefaultBatchSize
	}
	if o.lockTimeout == 0 {
		o.lockTimeout = DefaultLockTimeout
	}
	o.clock = clock.OrSystem(o.clock)
	return o, nil
}

func (o *options) reject(format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf("%w: storage/bolt: "+format, append([]any{storage.ErrInvalid}, args...)...)
	}
}

// WithFlushInterval sets how long a Put may wait in memory before the
// background commit writes it: at most about d after Put returns, the
// record is durable. Zero means DefaultFlushInterval (50 ms); negative is
// rejected.
func WithFlushInterval(d time.Duration) Option {
	return func(o *options) {
		if d < 0 {
			o.reject("negative flush interval %v", d)
		}
		o.flushInterval = d
	}
}

// WithBatchSize sets how many buffered records and metadata entries start
// a commit before the interval is up. Put blocks while four times as many
// are buffered and a commit is running, which bounds memory (to about
// eight batches, with the commit's own) when the disk is slower than the
// crawl. Zero means DefaultBatchSize (10,000); negative
// is rejected.
func WithBatchSize(n int) Option {
	return func(o *options) {
		if n < 0 {
			o.reject("negative batch size %d", n)
		}
		o.batchSize = n
	}
}

// WithLockTimeout sets how long Open waits for another process to release
// the file before it returns storage.ErrLocked. Zero means
// DefaultLockTimeout (1 s); negative is rejected.
func WithLockTimeout(d time.Duration) Option {
	return func(o *options) {
		if d < 0 {
			o.reject("negative lock timeout %v", d)
		}
		o.lockTimeout = d
	}
}

// WithVerify makes Open check the whole file more deeply before using it:
// every page of the B+trees (bbolt's consistency check), and every record
// and request decoded and checked against the ID log and the state index.
// It takes time in proportion to the file's size, several times what Open
// takes without it. Without it Open still checks the header, the buckets,
// the file length, the indexes against the counts, and the checksum of
// every record and request.
func WithVerify() Option { return func(o *options) { o.verify = true } }

// WithLogger gives the store a logger. It logs a failed commit (once: the
// error is sticky) and nothing in normal operation. Without it the store
// is silent.
func WithLogger(l zerolog.Logger) Option { return func(o *options) { o.log = l } }

// WithClock sets the clock that paces background commits and stamps
// Updated on records Put without one. Nil means the system clock.
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }
