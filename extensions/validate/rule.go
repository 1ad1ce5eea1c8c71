package validate

import (
	"regexp"
	"slices"

	"github.com/gocolly/colly/v2"
)

// rule is a compiled ruleSpec. Selectors are numbered across the whole
// validator (the OnHTML group selector, one matcher each), so a rule refers
// to them by index.
type rule struct {
	pattern   string
	re        *regexp.Regexp
	floor     int
	require   []int     // selector indices that must match
	elements  []element // custom element checks
	bodies    []bodySpec
	watches   []bool   // by selector index: does any check of this rule use it
	selectors []string // the validator's selectors, by index
	parse     bool     // does the rule need Colly's HTML parse at all
}

type element struct {
	sel      int
	selector string
	check    func(e *colly.HTMLElement) error
}

// compile turns specs into rules, numbering every distinct selector. It
// returns the rules (Page rules in order, then the fallback) and the
// selectors.
func compile(pages []*ruleSpec, fallback *ruleSpec) ([]*rule, []string) {
	var selectors []string
	index := func(s string) int {
		if i := slices.Index(selectors, s); i >= 0 {
			return i
		}
		selectors = append(selectors, s)
		return len(selectors) - 1
	}
	specs := append(slices.Clone(pages), fallback)
	rules := make([]*rule, len(specs))
	for i, s := range specs {
		r := &rule{pattern: s.pattern, re: s.re, floor: s.floor, bodies: s.bodies}
		if r.floor < 0 {
			r.floor = DefaultMinBytes
		}
		for _, sel := range s.require {
			if j := index(sel); !slices.Contains(r.require, j) {
				r.require = append(r.require, j)
			}
		}
		for _, e := range s.elements {
			r.elements = append(r.elements, element{sel: index(e.selector), selector: e.selector, check: e.check})
		}
		rules[i] = r
	}
	for _, r := range rules {
		r.selectors = selectors
		r.watches = make([]bool, len(selectors))
		for _, j := range r.require {
			r.watches[j] = true
		}
		for _, e := range r.elements {
			r.watches[e.sel] = true
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
