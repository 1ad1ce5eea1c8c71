// Package profileerr is the error a breaker profile's Validate returns:
// which field of which profile is out of range, and why. It lives here so
// that extensions/breaker/profiles can point at the line of a profiles
// file that set the field, while a user of package breaker sees an error
// wrapping breaker.ErrInvalidProfile.
package profileerr

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every *Error (breaker.ErrInvalidProfile).
var ErrInvalid = errors.New("breaker: invalid profile")

// Error says which field of which profile is out of range and why.
type Error struct {
	Profile string
	Field   string
	Value   any
	Reason  string
}

func (e *Error) Error() string {
	name := e.Profile
	if name == "" {
		name = "(unnamed)"
	}
	return fmt.Sprintf("breaker: profile %s: %s = %v: %s", name, e.Field, e.Value, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *Error) Unwrap() error { return ErrInvalid }
