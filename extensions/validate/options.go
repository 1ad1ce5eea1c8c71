package validate

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/andybalholm/cascadia"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// DefaultMinBytes is the byte floor of a rule that has no MinBytes check.
// A consent or cookie shell served with status 200 is about 900 bytes; a
// real product page is tens of kilobytes.
const DefaultMinBytes = 1024

// DefaultBrokenAfter is the number of full-size 2xx pages in a row, all
// failing only the structure check, after which a domain is diagnosed
// selector_broken (see BrokenDomain).
//
// Why a small window of consecutive pages rather than a verdict over all
// evidence at the end: the breaker stops the evidence. A profile of three
// consecutive failures trips on the third invalid page, and an open breaker
// sends nothing more; a diagnosis that waited for more pages would never be
// made. Three is the shortest trip among the project's profiles (the
// rate-based ones need at least six failures), so with the default the
// diagnosis is complete no later than the page that trips the breaker: the
// validator scores in its OnScraped, which runs before the breaker's. One or
// two would let a pair of odd pages (an out-of-stock product without a
// price) stand for a broken template. Counting pages in a row also keeps the
// diagnosis to a template change: a valid page in between means the
// selector still works.
const DefaultBrokenAfter = 3

// An Option configures a Validator. Checks (MinBytes, Require, Element,
// Body) are Options too: given to New directly they form the rule for every
// page no Page rule matches.
type Option interface {
	apply(*config) error
}

// A Check is one test of a page, given to New or to Page.
type Check interface {
	Option
	addTo(r *ruleSpec) error
}

// MinBytes sets the rule's byte floor: a body shorter than n bytes fails
// with "below floor: <len> < n bytes". Zero turns the floor off; a
// negative n is rejected by New. A rule without MinBytes uses
// DefaultMinBytes.
func MinBytes(n int) Check { return checkFunc(func(r *ruleSpec) error { return r.setFloor(n) }) }

// Require adds CSS selectors that must each match at least one element, or
// the page fails with `missing selector "<sel>"`. The match is taken from
// Colly's own parse of the page, never from a second one. Colly builds an
// HTMLElement with its text for every element a selector matches, so name
// small elements (a title, not "body"). Bodies Colly does not parse as HTML
// (JSON, binary, empty) match no selector; check them with Body. An empty
// or invalid selector is rejected by New.
func Require(selectors ...string) Check {
	return checkFunc(func(r *ruleSpec) error {
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

// Element adds a custom check on the elements matching selector, riding on
// Colly's parse like Require. The selector must match at least one element
// (else `missing selector "<sel>"`), and check must accept every element it
// is shown (else "<sel>: <error>"). Both count as structure reasons. check
// is called once per matching element, in document order, until it returns
// an error; the first error's text becomes the reason.
func Element(selector string, check func(e *colly.HTMLElement) error) Check {
	return checkFunc(func(r *ruleSpec) error {
		if err := checkSelector("Element", selector); err != nil {
			return err
		}
		if check == nil {
			return fmt.Errorf("Element(%q, nil): give a check function", selector)
		}
		r.elements = append(r.elements, elementSpec{selector: selector, check: check})
		return nil
	})
}

// Body adds a custom check on the whole response (status, headers and
// body), for what a selector cannot say: a JSON field, a header, a
// checksum. check returns nil when the page is good; a failure reads
// "<name>: <error>" and counts as a structure reason. It runs once per
// response, in the validator's OnResponse.
func Body(name string, check func(r *colly.Response) error) Check {
	return checkFunc(func(r *ruleSpec) error {
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

// Page adds a rule for the pages whose URL matches pattern, a regular
// expression matched anywhere in the full URL (as Colly's URLFilters are).
// Rules are tried in the order given and the first match wins: only its
// checks apply. A rule is complete on its own: its status must be 2xx, its
// floor is its own MinBytes or DefaultMinBytes, and its structure is its own
// Require, Element and Body checks; nothing is inherited from the top-level
// checks. Pages no Page rule matches are scored by the top-level checks
// (status 2xx and DefaultMinBytes when there are none), so an unexpected
// page type cannot pass as data unseen. Give a Page rule with MinBytes(0)
// and no structure to accept a page type as it comes.
func Page(pattern string, checks ...Check) Option {
	return optionFunc(func(c *config) error {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return fmt.Errorf("Page(%q): the URL pattern is not a valid regular expression: %w", pattern, err)
		}
		r := &ruleSpec{pattern: pattern, re: re, floor: -1}
		for i, ch := range checks {
			if ch == nil {
				return fmt.Errorf("Page(%q): check %d is nil", pattern, i)
			}
			if err := ch.addTo(r); err != nil {
				return fmt.Errorf("Page(%q): %w", pattern, err)
			}
		}
		c.pages = append(c.pages, r)
		return nil
	})
}

// Config is the validator's settings besides its checks; a zero field
// keeps the default. It is an Option: a later Config's non-zero fields win.
type Config struct {
	// Logger is for selector_broken (error level) and page_invalid (debug
	// level) events. Without it the validator is silent.
	Logger zerolog.Logger

	// OnBroken is called once per domain, from the callback that scored
	// the page completing the evidence, when the domain is diagnosed
	// selector_broken. It must not block for long.
	OnBroken func(BrokenDomain)

	// BrokenAfter is how many full-size 2xx pages in a row, failing only
	// the structure check, diagnose a domain selector_broken (zero means
	// DefaultBrokenAfter). Keep it at or below the breaker's
	// consecutive-failure limit, so the diagnosis is made before the
	// breaker stops the traffic that would provide the evidence: with a
	// breaker that trips sooner than DefaultBrokenAfter, set it to its
	// limit. A negative value is rejected by New.
	BrokenAfter int
}

// apply sets cf's non-zero fields over c.
func (cf Config) apply(c *config) error {
	if !collyx.IsZero(cf.Logger) {
		c.log = cf.Logger
	}
	if cf.OnBroken != nil {
		c.onBroken = cf.OnBroken
	}
	if cf.BrokenAfter != 0 {
		if cf.BrokenAfter < 1 {
			return fmt.Errorf("Config.BrokenAfter %d: need at least 1 page of evidence", cf.BrokenAfter)
		}
		c.brokenAfter = cf.BrokenAfter
	}
	return nil
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// checkFunc is a Check: given to New it adds itself to the top-level rule.
type checkFunc func(*ruleSpec) error

func (f checkFunc) addTo(r *ruleSpec) error { return f(r) }
func (f checkFunc) apply(c *config) error   { return f(&c.fallback) }

type config struct {
	pages       []*ruleSpec
	fallback    ruleSpec
	log         zerolog.Logger
	onBroken    func(BrokenDomain)
	brokenAfter int
}

type ruleSpec struct {
	pattern  string
	re       *regexp.Regexp
	floor    int // -1: not set
	require  []string
	elements []elementSpec
	bodies   []bodySpec
}

type elementSpec struct {
	selector string
	check    func(e *colly.HTMLElement) error
}

type bodySpec struct {
	name  string
	check func(r *colly.Response) error
}

func (r *ruleSpec) setFloor(n int) error {
	if n < 0 {
		return fmt.Errorf("MinBytes(%d): the byte floor must be 0 (off) or more", n)
	}
	if r.floor >= 0 {
		return fmt.Errorf("MinBytes(%d): the rule already has MinBytes(%d); give one", n, r.floor)
	}
	r.floor = n
	return nil
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
