package circuit

import (
	"errors"
	"fmt"
	"time"
)

// ErrOpen is what every refusal wraps: errors.Is(err, ErrOpen) tells a
// request the circuit did not let through from one that failed.
var ErrOpen = errors.New("breaker: circuit open")

// OpenError is a refusal: the circuit for Key did not let the request
// through, and it may be tried again at RetryAt.
type OpenError struct {
	Key string
	// State is the circuit's state at the refusal. Closed means the
	// caller held the request back (a pause, or its most requests in
	// flight), not the circuit.
	State   State
	RetryAt time.Time
	// Blocked is set when the caller holds the key for answering 401 or
	// 403 to every request lately: no pause helps, the client must change
	// (its proxy, headers, fingerprint). The circuit may well be closed.
	Blocked bool
}

func (e *OpenError) Error() string {
	if e.Blocked {
		return fmt.Sprintf("breaker: %s answered 401/403 to every request lately and is held for the rest of the run; the request was not sent: fix the client (proxy, headers, fingerprint), not the site", e.Key)
	}
	switch e.State {
	case Closed:
		return fmt.Sprintf("breaker: %s is paused or at its most requests in flight until %s; the request was not sent",
			e.Key, e.RetryAt.Format(time.RFC3339))
	case HalfOpen:
		return fmt.Sprintf("breaker: circuit for %s is half-open and its probes are in flight; retry after %s",
			e.Key, e.RetryAt.Format(time.RFC3339))
	}
	return fmt.Sprintf("breaker: circuit for %s is open; it may be probed again at %s",
		e.Key, e.RetryAt.Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrOpen) true.
func (e *OpenError) Is(target error) bool { return target == ErrOpen }
