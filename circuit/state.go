package circuit

import (
	"fmt"
	"slices"
)

// State is the state of one circuit.
type State uint8

// The three states of a circuit. The zero value is Closed.
const (
	// Closed lets requests through and records their outcomes in the window.
	Closed State = iota
	// Open refuses every request until the cooldown has passed.
	Open
	// HalfOpen lets at most Settings.HalfOpenProbes requests be in flight;
	// one failure re-opens, all passing closes.
	HalfOpen
)

var stateNames = [...]string{"closed", "open", "half-open"}

// String returns "closed", "open" or "half-open".
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// MarshalText implements encoding.TextMarshaler, so states read well in
// JSON reports and logs.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *State) UnmarshalText(b []byte) error {
	i := slices.Index(stateNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("circuit: unknown state %q (want closed, open or half-open)", b)
	}
	*s = State(i)
	return nil
}
