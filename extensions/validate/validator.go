package validate

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
	"golang.org/x/net/html"
)

// Validator scores every response a collector fetches on three checks
// (status, body size, required structure), keeps the verdict where the
// user's callbacks and a breaker can read it, and diagnoses domains whose
// selectors broke. Build it with New, wire it with Register before the
// breaker. It is safe for concurrent use, including with colly.Async.
//
// The size check also fails a body Colly cut off at its MaxBodySize
// ("truncated: ..."), which Colly itself does not report.
//
// The scoring state of a page is keyed by its *colly.Request, which Colly
// hands unchanged to every callback of one fetch, not by the Ctx, which a
// request shares with every child it visits. The key is a weak pointer and
// the entry goes with the request, at the latest after the next garbage
// collection, so the table neither leaks nor mixes concurrent requests. On
// a broad crawl, what the diagnosis keeps of a domain with no evidence
// under way is its valid count and its recent valid page sizes: a few bytes
// encoded, plus the host and a map entry.
type Validator struct {
	rules     []*rule
	selectors []string
	// group is every selector in one selector group, so Colly's parse is
	// walked once for all of them; matchers tell which of them an element
	// matched.
	group    string
	matchers []cascadia.Selector
	// elementChecks: some rule has Element checks, which need every
	// element a selector matches. Without them a selector only has to
	// match once, and the validator looks for each in Colly's parse
	// itself, stopping at the first match (see rootMatched).
	elementChecks bool
	log           zerolog.Logger
	onBroken      func(BrokenDomain)

	pages table
	diag  *diagnosis
}

// New builds a Validator. Checks given directly (MinBytes, Require, Element,
// Body) score every page no Page rule matches; with none, such pages are
// scored on status and DefaultMinBytes. Bad configuration (a negative
// floor, an invalid selector or pattern) is an error that quotes it.
func New(opts ...Option) (*Validator, error) {
	c := config{fallback: ruleSpec{floor: -1}, log: zerolog.Nop(), brokenAfter: DefaultBrokenAfter}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("validate: option %d is nil", i)
		}
		if err := o.apply(&c); err != nil {
			return nil, fmt.Errorf("validate: %w", err)
		}
	}
	v := &Validator{log: c.log, onBroken: c.onBroken, diag: newDiagnosis(c.brokenAfter)}
	v.rules, v.selectors = compile(c.pages, &c.fallback)
	for _, r := range v.rules {
		v.elementChecks = v.elementChecks || len(r.elements) > 0
	}
	v.group = strings.Join(v.selectors, ", ")
	for _, sel := range v.selectors {
		m, err := cascadia.Compile(sel)
		if err != nil {
			return nil, fmt.Errorf("validate: %q: %w", sel, err) // checked by the options already
		}
		v.matchers = append(v.matchers, m)
	}
	return v, nil
}

// VerdictOf returns the verdict of a response the validator scored, and
// false for one it has not seen (not registered on that collector, or asked
// before the validator's OnResponse ran). The verdict is complete in every
// OnScraped and OnError callback, and in OnHTML callbacks registered after
// the validator; asked earlier, the structure check reflects the selectors
// matched so far.
func (v *Validator) VerdictOf(r *colly.Response) (Verdict, bool) {
	if r == nil {
		return Verdict{}, false
	}
	p := v.pages.get(r.Request)
	if p == nil {
		return Verdict{}, false
	}
	return p.current(), true
}

// Check reports whether a fetched response is usable data: nil when valid,
// else an *InvalidError (errors.Is(err, ErrInvalid)) whose text lists the
// reasons. It is meant for a breaker, called once per response after every
// OnHTML callback ran, and for the 203-299 responses Colly v2.3.0 routes to
// OnError. Called for a response the validator's callbacks did not see (a
// collector it is not registered on, such as a clone's page the breaker's
// transport gated), it parses the body itself to check structure: a second
// parse of the page, which registering the validator on that collector
// spares.
func (v *Validator) Check(r *colly.Response) error {
	if r == nil || r.Request == nil || r.Request.URL == nil {
		return &InvalidError{Reasons: []Reason{{Kind: KindStatus, Text: "no response"}}}
	}
	p := v.pages.get(r.Request)
	if p == nil {
		switch {
		case r.StatusCode >= 200 && r.StatusCode <= 299:
			p = v.scoreUnparsed(r, 0)
		default:
			// An error status Colly did not parse: the status is reason
			// enough, and a structure check of an unparsed body would lie.
			np := newPage(v.rules, r, 0)
			np.unparsed = true
			p = v.pages.put(r.Request, np)
		}
	}
	return v.finish(p).Err()
}

// Broken returns the domains diagnosed selector_broken, sorted by domain.
// A diagnosis stands for the rest of the validator's life.
func (v *Validator) Broken() []BrokenDomain { return v.diag.broken() }

// finish fixes p's verdict and, the first time, feeds the diagnosis and
// the log.
func (v *Validator) finish(p *page) Verdict {
	verdict, first := p.finish()
	if !first {
		return verdict
	}
	if !verdict.Valid() {
		if e := v.log.Debug(); e.Enabled() {
			texts := make([]string, len(verdict.Reasons))
			for i, r := range verdict.Reasons {
				texts[i] = r.Text
			}
			e.Str("event", "page_invalid").Str("domain", verdict.Domain).Str("url", verdict.URL).
				Int("status", verdict.Status).Int("bytes", verdict.Bytes).Strs("reasons", texts).Msg("page failed validation")
		}
	}
	if b := v.diag.page(verdict); b != nil {
		v.broken(*b)
	}
	return verdict
}

func (v *Validator) broken(b BrokenDomain) {
	urls := make([]string, len(b.Pages))
	for i, e := range b.Pages {
		urls[i] = e.URL
	}
	v.log.Error().Str("event", "selector_broken").Str("domain", b.Domain).Strs("selectors", b.Selectors).
		Int("pages", len(b.Pages)).Int("valid_before", b.ValidBefore).Strs("urls", urls).
		Msg("full-size 2xx pages lack the required structure: the page template changed or the selector is wrong")
	if v.onBroken != nil {
		v.onBroken(b)
	}
}

// scoreUnparsed scores a 2xx response Colly did not parse because v2.3.0
// routes 203-299 to OnError. Colly never parsed this body, so parsing it
// here is still the page's one parse.
func (v *Validator) scoreUnparsed(r *colly.Response, maxBody int) *page {
	p := newPage(v.rules, r, maxBody)
	if p.rule.parse && collyx.IsHTML(r) {
		if doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body)); err == nil {
			for i, sel := range v.selectors {
				if !p.rule.watches[i] {
					continue
				}
				doc.Find(sel).Each(func(idx int, s *goquery.Selection) {
					p.onElement(i, colly.NewHTMLElementFromSelectionNode(r, s, s.Nodes[0], idx))
				})
			}
		}
	}
	return v.pages.put(r.Request, p)
}

// matched handles an element Colly's parse found for the group selector:
// a hit for every selector it matches. Element checks see the element with
// its Index among its own selector's matches, as a per-selector OnHTML
// would have shown it.
func (v *Validator) matched(p *page, e *colly.HTMLElement) {
	if len(v.matchers) == 1 {
		p.onElement(0, e)
		return
	}
	n := e.DOM.Nodes[0]
	for i, m := range v.matchers {
		if p.rule.watches[i] && m.Match(n) {
			ei := e
			if idx := p.next(i); idx != e.Index {
				cp := *e
				cp.Index = idx
				ei = &cp
			}
			p.onElement(i, ei)
		}
	}
}

// rootSelector is what the validator's OnHTML asks Colly for when no rule
// has Element checks: the document's head, which the HTML parser always
// makes, is a bare tag for Colly's walk of the parse to test each node
// against (the cheapest selector there is), and has little text for the
// HTMLElement Colly builds of it (the root element would carry the text
// of the whole page).
const rootSelector = "head"

// rootMatched handles the head element Colly's parse found for
// rootSelector: every selector p's rule watches is looked for from the top
// of the same parsed document, as Colly's Find would, and the search stops
// at its first match, which is all a Require needs. On a product page
// that is a few dozen elements in; a selector of its own would cost a
// walk of the whole document through a full selector match per element.
func (v *Validator) rootMatched(p *page, e *colly.HTMLElement) {
	if !p.rule.parse || len(e.DOM.Nodes) == 0 {
		return
	}
	top := e.DOM.Nodes[0]
	for top.Parent != nil {
		top = top.Parent
	}
	for i, m := range v.matchers {
		if !p.rule.watches[i] {
			continue
		}
		for n := top.FirstChild; n != nil; n = n.NextSibling {
			if n.Type == html.ElementNode && m.MatchFirst(n) != nil {
				p.onElement(i, e)
				break
			}
		}
	}
}

// failed handles an OnError: a 2xx Colly routed there is scored as a
// page; a failure of the target breaks the structure evidence.
func (v *Validator) failed(r *colly.Response, err error, maxBody int) {
	if r == nil || r.Request == nil || r.Request.URL == nil {
		return
	}
	if v.pages.get(r.Request) != nil {
		return // an HTML/XML parse error after OnResponse: OnScraped follows
	}
	if r.StatusCode >= 200 && r.StatusCode <= 299 {
		v.finish(v.scoreUnparsed(r, maxBody))
		return
	}
	if targetFailure(r.StatusCode, err) {
		v.diag.degraded(strings.ToLower(r.Request.URL.Host))
	}
}
