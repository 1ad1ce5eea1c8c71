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

// Transport wraps base (http.DefaultTransport when nil) so each request is
// cut once it outlives its domain's adaptive timeout (Profile
// TimeoutMultiple). Domains without one yet are not touched. Register
// installs it on the collector when a profile asks for adaptive timeouts;
// Colly cannot tell anyone which transport it already has, so give a
// transport of your own with WithBaseTransport, and do not call the
// collector's SetProxy or WithTransport after Register (they replace it).
func (b *Breaker) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &timeoutTransport{b: b, base: base}
}

type timeoutTransport struct {
	b    *Breaker
	base http.RoundTripper
}

func (t *timeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	v, ok := t.b.domains.Load(HostOf(req.URL.Host))
	if !ok {
		return t.base.RoundTrip(req)
	}
	d := v.(*domain)
	after := time.Duration(d.timeout.Load())
	if after <= 0 {
		return t.base.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeoutCause(req.Context(), after, &TimeoutError{Domain: d.name, After: after})
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		var te *TimeoutError
		if c := context.Cause(ctx); errors.As(c, &te) {
			return nil, te
		}
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel, ctx: ctx}
	return resp, nil
}

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

// WithBaseTransport gives the transport the adaptive timeout wraps
// (default http.DefaultTransport, which is what Colly uses unless told
// otherwise).
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
