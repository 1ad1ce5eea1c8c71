package breaker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// TimeoutError is the error of a request cut by its domain's adaptive
// timeout. It matches context.DeadlineExceeded with errors.Is, and counts
// as Degraded.
type TimeoutError struct {
	Domain string
	After  time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("breaker: request to %s cut after %v, its adaptive timeout (a multiple of its usual latency)", e.Domain, e.After)
}

// Is makes errors.Is(err, context.DeadlineExceeded) true.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// cancelBody releases the request's timeout once the body is closed, and
// reports a body cut by the timeout as the timeout.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
	ctx    context.Context
}

func (b *cancelBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		var te *TimeoutError
		if c := context.Cause(b.ctx); errors.As(c, &te) {
			return n, te
		}
	}
	return n, err
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// WithBaseTransport gives the transport the breaker's own wraps, instead
// of the one the collector has when Register runs. It is rarely needed:
// Register wraps the collector's transport, whatever it is.
func WithBaseTransport(rt http.RoundTripper) Option {
	return func(b *Breaker) error {
		if rt == nil {
			return fmt.Errorf("breaker: WithBaseTransport(nil): pass a transport, or leave the option out")
		}
		b.baseTransport = rt
		return nil
	}
}

// adaptiveTimeouts reports whether any profile in use asks for them.
func (b *Breaker) adaptiveTimeouts() bool {
	if b.profile.TimeoutMultiple > 0 {
		return true
	}
	for _, o := range b.overrides {
		if o.profile.TimeoutMultiple > 0 {
			return true
		}
	}
	return false
}

// timeoutFor is the request timeout the breaker's transport applies to d:
// its adaptive timeout, 0 for none.
func (b *Breaker) timeoutFor(d *domain) time.Duration {
	return time.Duration(d.timeout.Load())
}
