package circuit

import (
	"fmt"
	"time"
)

// Class is what one attempt's outcome says about the key (the site).
// Only Degraded and Invalid count as failures;
// only Success counts as health; the rest do not enter the window.
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

// Failure reports whether the class counts against the circuit.
func (c Class) Failure() bool { return c == Degraded || c == Invalid }

// Counted reports whether the class enters the circuit's window at all.
func (c Class) Counted() bool { return c == Success || c.Failure() }

// Result is what one attempt came to, as the circuit records it: its
// class and how long it took. (The run's outcome is package outcome's.)
type Result struct {
	Class   Class
	Latency time.Duration
}
