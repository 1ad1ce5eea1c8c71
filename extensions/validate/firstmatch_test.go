package validate_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/breakwater-crawl/breakwater/extensions/validate"
)

// A validator whose rules only Require selectors looks for them from the
// head Colly's parse found, stopping at each one's first match; one with
// Element checks sees every element Colly's walk finds for the group
// selector. On the same pages both must reach the same verdicts.
func TestRequireOnlyFindsWhatTheGroupWalkFinds(t *testing.T) {
	selectors := []string{"div.product h1.title", "span.price", "html", ":root", "head", "head > title", "body > main",
		"section.reviews p.review:nth-of-type(3)", "p.review + p.review", "a[href^='/next']", "#missing", "div.product > h1.title"}
	pages := map[string]reply{
		"/product":  {body: product(1, 4000)},
		"/restyled": {body: page(4000, `<section class="item"><h2 class="name">x</h2></section>`)},
		"/nested":   {body: page(2000, `<div class="product"><div><div><h1 class="title">deep</h1></div></div></div><a href="/next/2">next</a>`)},
		"/bare":     {body: []byte(`<p>no html, head or body tags at all` + fmt.Sprintf("%01100d", 0) + `</p>`)},
		"/frag":     {body: []byte(`<h1 class="title">a title outside any product</h1><span class="price">$1</span>` + fmt.Sprintf("<!--%01100d-->", 0))},
		"/json":     {body: []byte(`{"div": "product"}` + fmt.Sprintf("%01100d", 0)), ctype: "application/json"},
		"/empty":    {body: nil},
		"/xhtml":    {body: product(2, 3000), ctype: "application/xhtml+xml"},
		"/error":    {body: product(3, 3000), status: 503},
	}
	s := newSite()
	for p, r := range pages {
		s.set(p, r)
	}
	for _, sels := range [][]string{selectors, selectors[:1], {"#missing"}} {
		req := mustNew(t, validate.MinBytes(0), validate.Require(sels...))
		grp := mustNew(t, append([]validate.Option{validate.MinBytes(0)}, elemOptsFor(sels)...)...)
		c := collector(s, req, colly.AllowURLRevisit())
		grp.Register(c)
		got := map[string][2]validate.Verdict{}
		c.OnScraped(func(r *colly.Response) {
			a, okA := req.VerdictOf(r)
			b, okB := grp.VerdictOf(r)
			if !okA || !okB {
				t.Errorf("%s: verdicts known %v and %v", r.Request.URL.Path, okA, okB)
			}
			got[r.Request.URL.Path] = [2]validate.Verdict{a, b}
		})
		c.OnError(func(r *colly.Response, _ error) {
			a, _ := req.VerdictOf(r)
			b, _ := grp.VerdictOf(r)
			got[r.Request.URL.Path] = [2]validate.Verdict{a, b}
		})
		for p := range pages {
			_ = c.Visit("http://shop.test" + p)
		}
		if len(got) != len(pages) {
			t.Fatalf("%d verdicts for %d pages", len(got), len(pages))
		}
		for p, v := range got {
			if !reflect.DeepEqual(v[0].Reasons, v[1].Reasons) || v[0].Valid() != v[1].Valid() {
				t.Errorf("selectors %q, page %s:\n  first match: %+v\n  group walk:  %+v", sels, p, v[0].Reasons, v[1].Reasons)
			}
		}
	}
}

// elemOptsFor requires sels and adds an Element check that always passes
// on each, so the validator takes the group walk.
func elemOptsFor(sels []string) []validate.Option {
	opts := []validate.Option{validate.Require(sels...)}
	for _, sel := range sels {
		opts = append(opts, validate.Element(sel, func(*colly.HTMLElement) error { return nil }))
	}
	return opts
}
