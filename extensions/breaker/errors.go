package breaker

import (
	"errors"
	"fmt"
	"time"
)

// ErrOpen is the sentinel every refusal matches: errors.Is(err, ErrOpen)
// is true for a *CircuitOpenError.
var ErrOpen = errors.New("breaker: circuit open")

// CircuitOpenError is the refusal of a request to a domain whose circuit is
// open, or half-open with every probe slot taken. The request never reached
// the network and does not count as a failure of the site.
type CircuitOpenError struct {
	// Domain is the host (lower-case, port included) the request was for.
	Domain string
	// State is Open, HalfOpen when the probes are all in flight, or Closed
	// when the domain's pace held the request: a shared store holds the
	// domain for a Retry-After another worker was given, or a request
	// gated at the transport (a clone's) waited for the domain's pause or
	// room past its own timeout.
	State State
	// RetryAt is the earliest time the domain may be probed again.
	RetryAt time.Time
}

func (e *CircuitOpenError) Error() string {
	if e.State == Closed {
		return fmt.Sprintf("breaker: %s is paused or at its most requests in flight until %s; the request was not sent",
			e.Domain, e.RetryAt.Format(time.RFC3339))
	}
	if e.State == HalfOpen {
		return fmt.Sprintf("breaker: circuit for %s is half-open and its probes are in flight; retry after %s",
			e.Domain, e.RetryAt.Format(time.RFC3339))
	}
	return fmt.Sprintf("breaker: circuit for %s is open; it may be probed again at %s",
		e.Domain, e.RetryAt.Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrOpen) true.
func (e *CircuitOpenError) Is(target error) bool { return target == ErrOpen }
