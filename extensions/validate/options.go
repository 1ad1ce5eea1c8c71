package validate

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/andybalholm/cascadia"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// DefaultMinBytes is the byte floor of a rule that has no MinBytes check:
// above a consent shell's ~900 bytes, far below a real product page.
const DefaultMinBytes = 1024

// DefaultBrokenAfter is how many full-size 2xx pages in a row failing only
// structure diagnose a domain selector_broken (see BrokenDomain): the
// shortest trip among the breaker's profiles, so the breaker trips later.
const DefaultBrokenAfter = 3

// A Check is one test of a page, in Config.Checks or a Page's Checks:
// MinBytes, Require, Element or Body.
type Check interface {
	addTo(r *rule) error
}

// MinBytes sets the rule's byte floor (default DefaultMinBytes): a shorter
// body fails with "below floor: <len> < n bytes". Zero turns it off.
func MinBytes(n int) Check {
	return checkFunc(func(r *rule) error {
		if n < 0 {
			return fmt.Errorf("MinBytes(%d): the byte floor must be 0 (off) or more", n)
		}
		if r.floor >= 0 {
			return fmt.Errorf("MinBytes(%d): the rule already has MinBytes(%d); give one", n, r.floor)
		}
		r.floor = n
		return nil
	})
}

// Require adds CSS selectors that must each match at least one element of
// Colly's own parse, or the page fails with `missing selector "<sel>"`.
// Bodies Colly does not parse as HTML (JSON, binary, empty) match no
// selector; check them with Body.
func Require(selectors ...string) Check {
	return checkFunc(func(r *rule) error {
		if len(selectors) == 0 {
			return errors.New("Require(): give at least one CSS selector")
		}
		for _, s := range selectors {
			if err := checkSelector("Require", s); err != nil {
				return err
			}
			r.require = append(r.require, s)
		}
		return nil
	})
}

// Element adds a custom check on the elements matching selector: it must
// match at least one (else `missing selector "<sel>"`), and check, called
// per element in document order until it fails, must accept each (else
// "<sel>: <error>"). Both are structure reasons.
func Element(selector string, check func(e *colly.HTMLElement) error) Check {
	return checkFunc(func(r *rule) error {
		if err := checkSelector("Element", selector); err != nil {
			return err
		}
		if check == nil {
			return fmt.Errorf("Element(%q, nil): give a check function", selector)
		}
		r.elements = append(r.elements, element{selector: selector, check: check})
		return nil
	})
}

// Body adds a custom check on the whole response, for what a selector
// cannot say (a JSON field, a header). It runs once per response; a
// failure is the structure reason "<name>: <error>".
func Body(name string, check func(r *colly.Response) error) Check {
	return checkFunc(func(r *rule) error {
		if name == "" {
			return errors.New("Body(\"\", ...): give the check a name; it prefixes the reason")
		}
		if check == nil {
			return fmt.Errorf("Body(%q, nil): give a check function", name)
		}
		r.bodies = append(r.bodies, bodySpec{name: name, check: check})
		return nil
	})
}

// Page is a rule for the pages whose full URL matches the regular
// expression Pattern. The first matching Page alone scores a page, and
// inherits nothing from Config.Checks: status 2xx, its own MinBytes (or
// DefaultMinBytes) and its own structure checks.
// Page{Pattern: p, Checks: []Check{MinBytes(0)}} accepts a page type as it
// comes.
type Page struct {
	// Pattern is a regular expression matched against the full URL.
	Pattern string
	// Checks are the rule for the pages Pattern matches.
	Checks []Check
}

// rule compiles p.
func (p Page) rule() (*rule, error) {
	re, err := regexp.Compile(p.Pattern)
	if err != nil {
		return nil, fmt.Errorf("Page(%q): the URL pattern is not a valid regular expression: %w", p.Pattern, err)
	}
	r := &rule{pattern: p.Pattern, re: re, floor: -1}
	for i, ch := range p.Checks {
		if ch == nil {
			return nil, fmt.Errorf("Page(%q): check %d is nil", p.Pattern, i)
		}
		if err := ch.addTo(r); err != nil {
			return nil, fmt.Errorf("Page(%q): %w", p.Pattern, err)
		}
	}
	return r, nil
}

// Config configures New; its zero value scores every page on status and
// DefaultMinBytes alone. A zero field keeps the default.
type Config struct {
	// Checks is the rule for every page no Page matches.
	Checks []Check
	// Pages give page types rules of their own; the first whose Pattern
	// matches a page's URL scores it.
	Pages []Page
	// Logger gets selector_broken (error) and page_invalid (debug) events.
	Logger zerolog.Logger
	// OnBroken is called once per domain diagnosed selector_broken, from
	// a Colly callback: it must not block for long.
	OnBroken func(BrokenDomain)
	// BrokenAfter replaces DefaultBrokenAfter; keep it at or below the
	// breaker's consecutive-failure limit.
	BrokenAfter int
}

// build checks cf and returns the validator's settings.
func (cf Config) build() (config, error) {
	c := config{fallback: rule{floor: -1}, log: zerolog.Nop(), brokenAfter: DefaultBrokenAfter}
	for i, ch := range cf.Checks {
		if ch == nil {
			return c, fmt.Errorf("Config.Checks[%d] is nil", i)
		}
		if err := ch.addTo(&c.fallback); err != nil {
			return c, err
		}
	}
	for _, p := range cf.Pages {
		r, err := p.rule()
		if err != nil {
			return c, err
		}
		c.pages = append(c.pages, r)
	}
	if !collyx.IsZero(cf.Logger) {
		c.log = cf.Logger
	}
	c.onBroken = cf.OnBroken
	if cf.BrokenAfter < 0 {
		return c, fmt.Errorf("Config.BrokenAfter %d: need at least 1 page of evidence", cf.BrokenAfter)
	}
	c.brokenAfter = cmp.Or(cf.BrokenAfter, c.brokenAfter)
	return c, nil
}

// checkFunc is a Check.
type checkFunc func(*rule) error

func (f checkFunc) addTo(r *rule) error { return f(r) }

type config struct {
	pages       []*rule
	fallback    rule
	log         zerolog.Logger
	onBroken    func(BrokenDomain)
	brokenAfter int
}

func checkSelector(fn, s string) error {
	if s == "" {
		return fmt.Errorf("%s(\"\"): empty CSS selector", fn)
	}
	if _, err := cascadia.Compile(s); err != nil {
		return fmt.Errorf("%s(%q): invalid CSS selector: %w", fn, s, err)
	}
	return nil
}

// rule is a Page rule or the top-level one, as its checks built it and
// then as compile completed it. Selectors are numbered across the whole
// validator (the OnHTML group selector, one matcher each), so a compiled
// rule refers to them by index.
type rule struct {
	pattern  string
	re       *regexp.Regexp
	floor    int // -1: not set
	require  []string
	elements []element
	bodies   []bodySpec

	requireIdx []int  // by compile: the index of each of require
	watches    []bool // by selector index: does any check of this rule use it
	walks      []bool // by selector index: does an Element check of this rule use it (every match)
	parse      bool   // does the rule need Colly's HTML parse at all
}

type element struct {
	sel      int // by compile
	selector string
	check    func(e *colly.HTMLElement) error
}

type bodySpec struct {
	name  string
	check func(r *colly.Response) error
}

// compile numbers every distinct selector of rules and completes them.
// It returns the rules (Page rules in order, then the fallback) and the
// selectors.
func compile(pages []*rule, fallback *rule) ([]*rule, []string) {
	var selectors []string
	index := func(s string) int {
		if i := slices.Index(selectors, s); i >= 0 {
			return i
		}
		selectors = append(selectors, s)
		return len(selectors) - 1
	}
	rules := append(slices.Clone(pages), fallback)
	for _, r := range rules {
		if r.floor < 0 {
			r.floor = DefaultMinBytes
		}
		for _, sel := range r.require {
			r.requireIdx = append(r.requireIdx, index(sel))
		}
		for i := range r.elements {
			r.elements[i].sel = index(r.elements[i].selector)
		}
	}
	for _, r := range rules {
		r.watches = make([]bool, len(selectors))
		r.walks = make([]bool, len(selectors))
		for _, j := range r.requireIdx {
			r.watches[j] = true
		}
		for _, e := range r.elements {
			r.watches[e.sel] = true
			r.walks[e.sel] = true
		}
		r.parse = len(r.require) > 0 || len(r.elements) > 0
	}
	return rules, selectors
}

// match returns the first rule whose pattern matches url; the last rule
// (the fallback, with no pattern) matches everything.
func match(rules []*rule, url string) *rule {
	for _, r := range rules[:len(rules)-1] {
		if r.re.MatchString(url) {
			return r
		}
	}
	return rules[len(rules)-1]
}
