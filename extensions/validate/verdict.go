package validate

import (
	"errors"
	"strings"
)

// Kind names which of the three checks a Reason comes from.
type Kind uint8

const (
	// KindStatus: the status code is not 2xx.
	KindStatus Kind = iota + 1
	// KindSize: the body is below the byte floor, or was cut short.
	KindSize
	// KindStructure: a required selector matched nothing, or a custom
	// check (Element or Body) failed.
	KindStructure
)

// String returns "status", "size" or "structure".
func (k Kind) String() string {
	switch k {
	case KindStatus:
		return "status"
	case KindSize:
		return "size"
	case KindStructure:
		return "structure"
	}
	return "unknown"
}

// Reason is one failed check.
type Reason struct {
	// Kind is the check that failed.
	Kind Kind
	// Subject is the selector (Require, Element) or the check's name (Body)
	// a structure reason is about; empty for status and size reasons.
	Subject string
	// Text is the reason as a user reads it, for example "status 503",
	// "below floor: 903 < 1024 bytes" or `missing selector "h1.title"`.
	Text string
}

// String returns r.Text.
func (r Reason) String() string { return r.Text }

// Verdict is the score of one response.
type Verdict struct {
	// URL is the response's final URL (after redirects).
	URL string
	// Domain is the URL's host with its port, lower-case.
	Domain string
	// Rule is the pattern of the Page rule that scored the response, or ""
	// when the top-level checks did.
	Rule string
	// Status is the response's status code.
	Status int
	// Bytes is the length of the body Colly read.
	Bytes int
	// Reasons lists every failed check; empty means the page is valid.
	Reasons []Reason
}

// Valid reports whether the page passed every check.
func (v Verdict) Valid() bool { return len(v.Reasons) == 0 }

// Err returns nil for a valid page and an *InvalidError otherwise.
func (v Verdict) Err() error {
	if v.Valid() {
		return nil
	}
	return &InvalidError{URL: v.URL, Domain: v.Domain, Reasons: v.Reasons}
}

// structureOnly reports whether every reason is a structure reason (and
// there is at least one).
func (v Verdict) structureOnly() bool {
	for _, r := range v.Reasons {
		if r.Kind != KindStructure {
			return false
		}
	}
	return len(v.Reasons) > 0
}

// ErrInvalid matches every *InvalidError under errors.Is.
var ErrInvalid = errors.New("invalid page")

// InvalidError is the error Check returns for a page that failed at least
// one check. Use errors.As to read the reasons.
type InvalidError struct {
	URL     string
	Domain  string
	Reasons []Reason
}

// Error lists the reasons: "invalid page: below floor: 903 < 1024 bytes".
func (e *InvalidError) Error() string {
	var b strings.Builder
	b.WriteString("invalid page: ")
	for i, r := range e.Reasons {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r.Text)
	}
	return b.String()
}

// Is reports whether target is ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }
