package redis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

var (
	// ErrUnavailable means Redis could not be reached or serve the command
	// right now (refused, timeout, loading, read-only, out of memory, a
	// Cluster slot moving); the error wraps the cause. go-redis also retries
	// failed dials itself: lower MaxRetries and DialerRetries to fail faster.
	ErrUnavailable = errors.New("redis unavailable")

	// ErrLeaseLost means the job's lease expired and it was taken back: its
	// Fail or Park was not applied (Ack is, unless another worker holds it).
	ErrLeaseLost = errors.New("lease lost: the job was reclaimed after its visibility timeout")

	// ErrUnknownJob means the queue holds no such job: acked, expired with
	// the crawl's retention, or never enqueued.
	ErrUnknownJob = errors.New("unknown job")

	// errNotClaimed: a job that did not come from a claim was handed back.
	errNotClaimed = errors.New("job was not claimed from this queue")

	// ErrInvalidJob means AddRequest was given a request it cannot queue.
	ErrInvalidJob = errors.New("invalid job")

	// ErrInvalidConfig means a constructor was given options or a crawl id it
	// cannot use; the message says which and why.
	ErrInvalidConfig = errors.New("invalid configuration")

	// ErrCorrupt means a stored record could not be read back.
	ErrCorrupt = errors.New("corrupt queue record")
)

// emptyError is what Claim returns when no job is ready.
type emptyError struct {
	Next time.Time // the earliest a job may become claimable; zero: drained
}

func (e *emptyError) Error() string {
	if e.Next.IsZero() {
		return "no job ready: the queue is drained (nothing delayed or in flight)"
	}
	return "no job ready before " + e.Next.UTC().Format(time.RFC3339Nano)
}

// wrapErr says which call on which crawl failed and what to do, keeping
// the cause, and the context's error once it has ended; nil stays nil.
func wrapErr(ctx context.Context, crawl, op string, err error) error {
	if err == nil {
		return nil
	}
	ctxErr := ctx.Err()
	if dl, ok := ctx.Deadline(); ctxErr == nil && ok && !time.Now().Before(dl) {
		ctxErr = context.DeadlineExceeded // the socket deadline fired before the context's timer
	}
	if ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%w)", err, ctxErr)
	}
	if hint, ok := unavailable(err); ok && !errors.Is(err, context.Canceled) { // cancelled: the caller's doing
		return fmt.Errorf("breakwater/redis: %s on crawl %q: %w: %w (%s)", op, crawl, ErrUnavailable, err, hint)
	}
	return fmt.Errorf("breakwater/redis: %s on crawl %q: %w", op, crawl, err)
}

// unavailable reports whether Redis cannot serve us now, and what to do.
func unavailable(err error) (hint string, ok bool) {
	var netErr net.Error
	var redisErr goredis.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "Redis did not answer in time: check that it is reachable and not overloaded, or allow a longer deadline", true
	case errors.Is(err, goredis.ErrClosed):
		return "the Redis client was closed: use an open client", true
	case errors.Is(err, goredis.ErrPoolTimeout):
		return "every pooled connection is busy: raise the client's PoolSize or lower the concurrency", true
	case staleConn(err) || errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &netErr):
		return "check that Redis is running and reachable from this host, then retry", true
	case errors.As(err, &redisErr):
		msg := redisErr.Error()
		has := func(prefixes ...string) bool {
			return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(msg, p) })
		}
		switch {
		case has("READONLY"):
			return "connected to a read-only replica: point the client at the primary", true
		case has("OOM"):
			return "Redis is out of memory: raise maxmemory or free memory, or shorten Config.Retention and Config.DeadLetterLimit", true
		case has("MAXCLIENTS", "ERR max number of clients"):
			return "Redis refuses more clients: raise maxclients or lower the client's PoolSize", true
		case has("MOVED ", "ASK "): // a Cluster moving the crawl's slot: ASK, then MOVED after MaxRedirects
			return "the Redis Cluster is moving the crawl's hash slot to another master: retry shortly", true
		case has("LOADING", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY"):
			return "Redis is starting, failing over or busy: retry shortly", true
		}
	}
	return "", false
}

// staleRetries is how often a call that met a closed pooled connection is
// tried again at once.
const staleRetries = 3

// staleConn reports whether err is what a pooled connection to a
// restarted Redis gives on first use: worth an immediate retry.
func staleConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}
