package breaker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/gocolly/colly/v2"
)

// Class is what one attempt's outcome says about the site. Only Degraded and Invalid count as failures of the site;
// only Success counts as health.
type Class uint8

// The outcome classes.
const (
	// Success is a 2xx that passed validation.
	Success Class = iota
	// Degraded is a timeout, a refused or reset connection, a 5xx, a
	// truncated body or a DNS failure: the origin is struggling.
	Degraded
	// Invalid is a 2xx that failed validation: an empty or consent-shell
	// page, or one missing the required structure.
	Invalid
	// Throttled is a 429: the site is healthy and asks us to slow down.
	Throttled
	// Blocked is a 401 or 403: a client or fingerprint problem.
	Blocked
	// Gone is a 404 or 410: the URL does not exist; not retried.
	Gone
	// ClientError is any other 4xx: the site answered and refused our
	// request as malformed; it says nothing about the site's health.
	ClientError
	// Excluded says nothing about the site at all: cancelled, aborted by a
	// callback, a redirect to an already visited URL.
	Excluded

	numClasses = iota
)

var classNames = [numClasses]string{"success", "degraded", "invalid", "throttled", "blocked", "gone", "client_error", "excluded"}

// String returns the class's name as used in logs and reports.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// MarshalText implements encoding.TextMarshaler.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Failure reports whether the class counts against the breaker.
func (c Class) Failure() bool { return c == Degraded || c == Invalid }

// Counted reports whether the class enters the breaker's window at all.
func (c Class) Counted() bool { return c == Success || c.Failure() }

// Result is what one attempt came to, as the circuit records it: its
// class and how long it took. (The run's outcome is package outcome's.)
type Result struct {
	Class   Class
	Latency time.Duration
}

// Classify maps what came back from one attempt to its class: the HTTP
// status (0 when no response arrived) and the error Colly reported (nil on
// success). A 2xx is Success here; validation, which can turn it Invalid,
// is the caller's business.
func Classify(status int, err error) Class {
	if err != nil && status == 0 {
		return classifyError(err)
	}
	switch {
	case status >= 200 && status < 300:
		return Success
	case status == 429:
		return Throttled
	case status == 401 || status == 403:
		return Blocked
	case status == 404 || status == 410:
		return Gone
	case status == 408 || status >= 500:
		return Degraded
	case status >= 400:
		return ClientError
	case status >= 300:
		// A redirect Colly did not follow: the site answered.
		return Success
	}
	if err != nil {
		return classifyError(err)
	}
	return Success
}

func classifyError(err error) Class {
	var visited *colly.AlreadyVisitedError
	switch {
	case errors.Is(err, context.Canceled),
		errors.Is(err, colly.ErrAbortedBeforeRequest),
		errors.Is(err, colly.ErrAbortedAfterHeaders),
		errors.As(err, &visited),
		errors.Is(err, ErrOpen):
		return Excluded
	}
	// Everything else that stopped a response from arriving whole is the
	// origin's trouble: timeouts, resets, refusals, truncated bodies, DNS.
	return Degraded
}

// isDNSError reports whether err is a name-resolution failure. DNS failures
// count as Degraded, but the resolver may be ours: logs say so.
func isDNSError(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// errorKind names a transport error for logs: timeout, refused, reset,
// truncated, dns or transport.
func errorKind(err error) string {
	var ne net.Error
	switch {
	case err == nil:
		return ""
	case isDNSError(err):
		return "dns"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "truncated"
	}
	return "transport"
}
