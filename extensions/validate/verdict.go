package validate

import (
	"errors"
	"strings"
)

// Kind names which of the three checks a Reason comes from.
type Kind uint8

// The checks a Reason comes from.
const (
	KindStatus    Kind = iota + 1 // the status code is not 2xx
	KindSize                      // the body is below the floor, or was cut short
	KindStructure                 // a selector matched nothing, or an Element or Body check failed
)

// String returns "status", "size" or "structure".
func (k Kind) String() string {
	if k < KindStatus || k > KindStructure {
		return "unknown"
	}
	return [...]string{"status", "size", "structure"}[k-1]
}

// Reason is one failed check.
type Reason struct {
	Kind Kind
	// Subject is the selector or Body check name of a structure reason.
	Subject string
	// Text is for people: "status 503", `missing selector "h1.title"`.
	Text string
}

// String returns r.Text.
func (r Reason) String() string { return r.Text }

// Verdict is the score of one response.
type Verdict struct {
	URL     string   // the final URL, after redirects
	Domain  string   // the URL's host with its port, lower-case
	Rule    string   // the pattern of the Page rule that scored it; "" for the top-level checks
	Status  int      // the status code
	Bytes   int      // the length of the body Colly read
	Reasons []Reason // every failed check; empty when valid
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
	return "invalid page: " + strings.Join(reasonTexts(e.Reasons), "; ")
}

func reasonTexts(rs []Reason) []string {
	texts := make([]string, len(rs))
	for i, r := range rs {
		texts[i] = r.Text
	}
	return texts
}

// Is reports whether target is ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }
