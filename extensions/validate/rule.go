package validate

import (
	"regexp"
	"slices"

	"github.com/gocolly/colly/v2"
)

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
		for _, j := range r.requireIdx {
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
