package validate_test

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/debug"

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
		req := mustNew(t, validate.Config{Checks: []validate.Check{validate.MinBytes(0), validate.Require(sels...)}})
		// mixed: the same Requires beside an Element check on a selector
		// of its own, so the first matches ride on a group walk.
		mixed := mustNew(t, validate.Config{
			Checks: []validate.Check{validate.MinBytes(0), validate.Require(sels...), validate.Element("p.review", func(*colly.HTMLElement) error { return nil })},
			Pages: []validate.Page{
				{Pattern: `/never-matches/`, Checks: []validate.Check{validate.Element("span.price", func(*colly.HTMLElement) error { return nil })}},
			},
		})
		grp := mustNew(t, validate.Config{Checks: append([]validate.Check{validate.MinBytes(0)}, elemChecksFor(sels)...)})
		c := collector(s, req, colly.AllowURLRevisit())
		grp.Register(c)
		mixed.Register(c)
		got := map[string][3]validate.Verdict{}
		verdicts := func(r *colly.Response, known bool) {
			a, okA := req.VerdictOf(r)
			b, okB := grp.VerdictOf(r)
			m, okM := mixed.VerdictOf(r)
			if known && (!okA || !okB || !okM) {
				t.Errorf("%s: verdicts known %v, %v and %v", r.Request.URL.Path, okA, okB, okM)
			}
			got[r.Request.URL.Path] = [3]validate.Verdict{a, b, m}
		}
		c.OnScraped(func(r *colly.Response) { verdicts(r, true) })
		c.OnError(func(r *colly.Response, _ error) { verdicts(r, false) })
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
			// mixed may add only its own check's reason (no p.review)
			var own []validate.Reason
			for _, r := range v[2].Reasons {
				if r.Subject != "p.review" {
					own = append(own, r)
				}
			}
			if !reflect.DeepEqual(own, v[1].Reasons) {
				t.Errorf("selectors %q, page %s:\n  beside an Element check: %+v\n  group walk:              %+v", sels, p, v[2].Reasons, v[1].Reasons)
			}
		}
	}
}

// Colly builds an HTMLElement, copying its text, for every element it hands
// an OnHTML callback. A Required selector needs one match a page, found by
// the validator itself; only Element checks need every element. So, beside
// an Element check, Colly hands the validator that check's elements and one
// more (the head, where it looks for the Required selectors), not every
// element a Required selector matches.
func TestRequiredSelectorsBesideAnElementCheckCostColly(t *testing.T) {
	body := []byte(page(20000, `<div class="product"><h1 class="title">T</h1><span class="price">$1.00</span></div>`))
	reviews := strings.Count(string(body), `<p class="review">`)
	s := newSite().set("/p/1", reply{body: body})
	d := &htmlEvents{bySelector: map[string]int{}}
	for _, tc := range []struct {
		name string
		cfg  validate.Config
		most int // elements Colly may hand the validator
	}{
		{"require only", validate.Config{Checks: []validate.Check{validate.Require("p.review", titleSel)}}, 1},
		{"require beside an element check", validate.Config{
			Checks: []validate.Check{validate.Require("p.review", titleSel), validate.Element(priceSel, func(*colly.HTMLElement) error { return nil })},
		}, 2},
		{"the element check's selector required too", validate.Config{
			Checks: []validate.Check{validate.Require("p.review", priceSel), validate.Element(priceSel, func(*colly.HTMLElement) error { return nil })},
		}, 2},
		{"an element check on every review", validate.Config{
			Checks: []validate.Check{validate.Require(titleSel), validate.Element("p.review", func(*colly.HTMLElement) error { return nil })},
		}, reviews + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mustNew(t, tc.cfg)
			c := colly.NewCollector(colly.Debugger(d))
			c.WithTransport(s)
			v.Register(c)
			vs := collect(t, c, v)
			clear(d.bySelector)
			if err := c.Visit("http://shop.test/p/1"); err != nil {
				t.Fatal(err)
			}
			if got, _ := vs.get("/p/1"); !got.Valid() {
				t.Fatalf("verdict %q", texts(got))
			}
			n := 0
			for _, k := range d.bySelector {
				n += k
			}
			if n > tc.most {
				t.Errorf("Colly handed the validator %d elements (%v), want at most %d; the page has %d reviews", n, d.bySelector, tc.most, reviews)
			}
		})
	}
}

// htmlEvents counts Colly's "html" debug events (one per element handed to
// an OnHTML callback) by the callback's selector.
type htmlEvents struct {
	mu         sync.Mutex
	bySelector map[string]int
}

func (d *htmlEvents) Init() error { return nil }

func (d *htmlEvents) Event(e *debug.Event) {
	if e.Type != "html" {
		return
	}
	d.mu.Lock()
	d.bySelector[e.Values["selector"]]++
	d.mu.Unlock()
}

// elemChecksFor requires sels and adds an Element check that always passes
// on each, so the validator takes the group walk.
func elemChecksFor(sels []string) []validate.Check {
	checks := []validate.Check{validate.Require(sels...)}
	for _, sel := range sels {
		checks = append(checks, validate.Element(sel, func(*colly.HTMLElement) error { return nil }))
	}
	return checks
}
