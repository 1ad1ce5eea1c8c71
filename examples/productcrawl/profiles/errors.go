package profiles

import (
	"errors"
	"strconv"
	"strings"
)

// ErrInvalid is matched by every error about a profiles file's content:
// errors.Is(err, ErrInvalid) is true for an *Error, and for the joined
// errors Parse returns when a file has several mistakes.
var ErrInvalid = errors.New("profiles: invalid profiles file")

// Error is one mistake in a profiles file, located by line and by the path
// of the field, as an editor and a reader both find it:
//
//	profiles.yaml:7: breaker_profiles.fragile.failure_threshold: 1.5: must be in (0, 1] ...
//
// An unknown field (with the likely intended one: cooldown is
// cooldown_seconds), a value of the wrong type (a quoted number, yes for
// true, 5m for a number of seconds), a name written twice, a reference to
// a profile nobody defines, a domain pattern breaker.Config.Domains
// would not match, and a value breaker.Profile.Validate refuses are each an
// *Error; all match ErrInvalid.
type Error struct {
	// File is the name given to Parse, or the path given to Load.
	File string
	// Line is the 1-based line of the mistake; 0 when it concerns the
	// whole file (an empty file, a read error).
	Line int
	// Path is the dotted path of the field, "breaker_profiles.fragile.failure_threshold";
	// empty for the whole file.
	Path string
	// Value is the value as written in the file (or, for a value a profile
	// inherited, as it would be written); empty when there is none.
	Value string
	// Reason says what is wrong and what would be right.
	Reason string
	// Err is the underlying cause when there is one: Profile.Validate's
	// error for an out-of-range value (it wraps breaker.ErrInvalidProfile).
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	if e.Value != "" {
		b.WriteString(e.Value)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap makes errors.Is(err, ErrInvalid) true and lets errors.Is and
// errors.As reach the cause (Profile.Validate's error for an out-of-range
// value).
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}
