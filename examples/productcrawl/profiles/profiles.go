package profiles

import (
	"errors"
	"fmt"
	"github.com/breakwater-crawl/breakwater/circuit"
	"os"
	"slices"
	"strings"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// Set is the content of a profiles file, every profile resolved and
// validated: the default profile, the named profiles, and which domains
// use which. It is read-only and safe for concurrent use.
//
// A nil *Set stands for no file at all: Default is breaker.Standard(),
// Profile finds the built-in profiles, and Options is empty. A program
// whose profiles file is optional need not test for one.
type Set struct {
	file       string
	profiles   map[string]breaker.Profile
	names      []string
	def        breaker.Profile
	hasDefault bool
	domains    []Assignment
	pacing     []DomainPacing
}

// Assignment is one entry of domains: the hosts matching Pattern use
// Profile.
type Assignment struct {
	// Pattern is an exact host ("shop.example.com", "127.0.0.1:8080") or a
	// suffix starting with a dot (".example.org"), lower-cased; see
	// breaker.Config.Domains.
	Pattern string
	Profile breaker.Profile
	// Line is where the file assigns it.
	Line int
}

// Load reads and parses the profiles file at path. Errors about its
// content name the path and the line (see Parse); a file that cannot be
// read is an error wrapping the os error.
func Load(path string) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("profiles: read the profiles file: %w", err)
	}
	return Parse(path, data)
}

// Parse reads a profiles file's content; name is what errors call the file
// (its path, usually; "(profiles)" when empty). Every mistake is reported, ordered by line, each
// an *Error: one on its own, several joined with errors.Join. All match
// ErrInvalid; a value out of range also matches
// breaker.ErrInvalidProfile, with Profile.Validate's error as its cause.
//
// Each mistake is reported once: a profile with a field that cannot be
// read (unknown, or of the wrong type) is not checked for range, and what
// extends it or names it stays silent.
//
// Where a profile starts:
//
//   - With extends: from the named profile, the file's own or a built-in
//     one (conservative, standard, aggressive); the fields it lists replace
//     that profile's. Chains are followed; a cycle is an error.
//   - A built-in name without extends changes the built-in: it starts
//     from breaker's own profile of that name, so a block that
//     restates the built-in values, loads as exactly the built-ins. Every
//     mention of that name in the file (default, domains, extends) and
//     Set.Profile then mean the changed one.
//   - Any other name starts from nothing: window_size, failure_threshold,
//     cooldown_seconds and half_open_probes are required, and every
//     optional rule (slow calls, slope, cooldown growth, adaptive timeout)
//     is off unless set. There are no silent defaults.
//
// The built-in profiles need no definition to be named by default, domains
// or extends. Without default the rest use standard.
func Parse(name string, data []byte) (*Set, error) {
	if name == "" {
		name = "(profiles)"
	}
	p := &parser{file: name}
	root := p.read(data)
	if root == nil {
		return nil, p.err()
	}
	// Profiles with a field that could not be read are not built, and
	// nothing that depends on them reports an error of its own: each
	// mistake is reported once.
	doc := p.parse(root)
	r := &resolver{p: p, doc: doc, state: map[string]status{}, out: map[string]breaker.Profile{}, origin: map[string]string{}}
	for _, rp := range doc.profiles {
		r.get(rp.name)
	}
	set := &Set{file: name, profiles: r.out, pacing: doc.pacing}
	for _, rp := range doc.profiles {
		set.names = append(set.names, rp.name)
	}
	r.assign(set)
	if len(p.errs) > 0 {
		return nil, p.err()
	}
	return set, nil
}

func (p *parser) err() error {
	sortErrors(p.errs)
	if len(p.errs) == 1 {
		return p.errs[0]
	}
	errs := make([]error, len(p.errs))
	for i, e := range p.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// File returns the name the set was parsed under ("" for a nil Set).
func (s *Set) File() string {
	if s == nil {
		return ""
	}
	return s.file
}

// Default returns the profile the file names under default:, or, when it
// names none, the standard profile (as the file may have redefined it).
func (s *Set) Default() breaker.Profile {
	if s != nil && s.hasDefault {
		return s.def
	}
	p, _ := s.Profile(breaker.Standard().Name)
	return p
}

// Profile returns the profile called name: one the file defines (a
// redefined built-in included), else a built-in one. The error for an
// unknown name wraps breaker.ErrInvalidProfile and lists the names there
// are.
func (s *Set) Profile(name string) (breaker.Profile, error) {
	if s != nil {
		if p, ok := s.profiles[name]; ok {
			return p, nil
		}
	}
	if p, ok := builtins()[name]; ok {
		return p, nil
	}
	known := "conservative, standard, aggressive"
	var own []string
	for _, n := range s.Names() {
		if _, builtin := builtins()[n]; !builtin {
			own = append(own, n)
		}
	}
	if len(own) > 0 {
		known += "; defined in " + s.file + ": " + strings.Join(own, ", ")
	}
	return breaker.Profile{}, fmt.Errorf("%w: no profile named %q (built in: %s)", breaker.ErrInvalidProfile, name, known)
}

// Names returns the profiles the file defines, in the file's order.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.names)
}

// Domains returns the domain assignments, in the file's order.
func (s *Set) Domains() []Assignment {
	if s == nil {
		return nil
	}
	return slices.Clone(s.domains)
}

// Config returns the breaker.Config of the file: its default profile, and
// its domain assignments in Domains (nil when it has none). Set the rest
// of the breaker's settings on it:
//
//	cfg := set.Config()
//	cfg.Logger = log
//	b, err := breaker.New(cfg)
//
// Within the breaker the most specific pattern wins (an exact host, then
// the longest suffix), whatever the file's order.
func (s *Set) Config() breaker.Config {
	c := breaker.Config{Profile: s.Default()}
	if s == nil || len(s.domains) == 0 {
		return c
	}
	c.Domains = make(map[string]breaker.Profile, len(s.domains))
	for _, d := range s.domains {
		c.Domains[d.Pattern] = d.Profile
	}
	return c
}

// builtins returns the built-in profiles by name ("conservative",
// "standard", "aggressive"): a new map of fresh copies at each call.
func builtins() map[string]circuit.Profile {
	m := map[string]circuit.Profile{}
	for _, p := range []circuit.Profile{breaker.Conservative(), breaker.Standard(), breaker.Aggressive()} {
		m[p.Name] = p
	}
	return m
}
