package validate

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
	"golang.org/x/net/html"
)

// Validator scores every response a collector fetches on status, body
// size (a body Colly cut at its MaxBodySize fails as truncated) and
// required structure, keeps the verdict for the user's callbacks and a
// breaker, and diagnoses domains whose selectors broke. Build it with New,
// wire it with Register before the breaker. It is safe for concurrent use.
type Validator struct {
	rules     []*rule
	selectors []string
	matchers  []cascadia.Selector // by selector index, compiled once
	// Selectors an Element check names (in any rule) need every element
	// Colly's walk finds; the others (Require only) need one match, which
	// the validator finds itself from the document's top (firstMatches).
	walked []int // selector indices of the former, in order
	first  []int // and of the latter
	// group is the OnHTML selector: the walked ones, and rootSelector when
	// some selector is looked for once, so Colly walks its parse once.
	group    string
	root     bool // group holds rootSelector
	log      zerolog.Logger
	onBroken func(BrokenDomain)

	pages table
	diag  *diagnosis
}

// New builds a Validator: cfg.Checks score every page no cfg.Pages rule
// matches. Bad configuration (a negative floor, an invalid selector or
// pattern) is an error that quotes it.
func New(cfg Config) (*Validator, error) {
	c, err := cfg.build()
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	v := &Validator{log: c.log, onBroken: c.onBroken, diag: newDiagnosis(c.brokenAfter)}
	v.rules, v.selectors = compile(c.pages, &c.fallback)
	var group []string
	for i, sel := range v.selectors {
		v.matchers = append(v.matchers, cascadia.MustCompile(sel)) // checked by the checks
		if slices.ContainsFunc(v.rules, func(r *rule) bool { return r.walks[i] }) {
			v.walked = append(v.walked, i)
			group = append(group, sel)
		} else {
			v.first = append(v.first, i)
		}
	}
	if len(v.first) > 0 {
		v.root = true
		group = append([]string{rootSelector}, group...)
	}
	v.group = strings.Join(group, ", ")
	return v, nil
}

// VerdictOf returns the verdict of a response the validator scored, or
// false for one it has not seen. The verdict is complete in OnScraped and
// OnError, and in OnHTML callbacks registered after the validator.
func (v *Validator) VerdictOf(r *colly.Response) (Verdict, bool) {
	if r != nil {
		if p := v.pages.get(r.Request); p != nil {
			return p.current(), true
		}
	}
	return Verdict{}, false
}

// Check reports whether a fetched response is usable data: nil when valid,
// else an *InvalidError listing the reasons. A breaker calls it once per
// response, after every OnHTML callback. For a response the validator's
// callbacks did not see, it parses the body itself.
func (v *Validator) Check(r *colly.Response) error {
	if r == nil || r.Request == nil || r.Request.URL == nil {
		return &InvalidError{Reasons: []Reason{{Kind: KindStatus, Text: "no response"}}}
	}
	p := v.pages.get(r.Request)
	if p == nil {
		p = v.scoreUnparsed(r, 0)
	}
	return v.finish(p).Err()
}

// Broken returns the domains diagnosed selector_broken, sorted by domain.
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
			e.Str("event", "page_invalid").Str("domain", verdict.Domain).Str("url", verdict.URL).
				Int("status", verdict.Status).Int("bytes", verdict.Bytes).Strs("reasons", reasonTexts(verdict.Reasons)).Msg("page failed validation")
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

// scoreUnparsed scores a response Colly did not parse: a 2xx (v2.3.0
// routes 203-299 to OnError) it parses once itself; an error status gets
// no structure check.
func (v *Validator) scoreUnparsed(r *colly.Response, maxBody int) *page {
	p := newPage(v.rules, r, maxBody)
	p.unparsed = r.StatusCode < 200 || r.StatusCode > 299
	if !p.unparsed && p.rule.parse && collyx.IsHTML(r) {
		if doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body)); err == nil && len(doc.Nodes) > 0 {
			for i, m := range v.matchers {
				switch {
				case !p.rule.watches[i]:
				case p.rule.walks[i]:
					doc.FindMatcher(m).Each(func(idx int, s *goquery.Selection) {
						p.onElement(i, colly.NewHTMLElementFromSelectionNode(r, s, s.Nodes[0], idx))
					})
				case firstMatch(m, doc.Nodes[0]):
					p.found(i)
				}
			}
		}
	}
	return v.pages.put(r.Request, p)
}

// rootSelector is in the OnHTML selector when some selector is looked for
// once: a bare tag the parser always makes once, with little text for
// Colly to copy. From it the validator finds the document's top.
const rootSelector = "head"

var rootMatcher = cascadia.MustCompile(rootSelector)

// matched takes an element Colly found for the group selector: the head
// (rootSelector) starts the search for the selectors looked for once; an
// element of a walked selector is a hit of every one it matches, with its
// Index among that selector's own.
func (v *Validator) matched(p *page, e *colly.HTMLElement) {
	if !p.rule.parse || len(e.DOM.Nodes) == 0 {
		return
	}
	n := e.DOM.Nodes[0]
	if !v.root && len(v.walked) == 1 {
		p.onElement(v.walked[0], e) // the group is this selector: Colly's Index is its own
		return
	}
	if v.root && rootMatcher.Match(n) {
		top := n
		for top.Parent != nil {
			top = top.Parent
		}
		v.firstMatches(p, top)
	}
	for _, i := range v.walked {
		if !p.rule.watches[i] || !p.rule.walks[i] && p.has(i) {
			continue // another rule's Element check: this one needs a match
		}
		if v.matchers[i].Match(n) {
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

// firstMatches looks for every selector p's rule watches that is looked
// for once in the document whose top node is top.
func (v *Validator) firstMatches(p *page, top *html.Node) {
	for _, i := range v.first {
		if p.rule.watches[i] && firstMatch(v.matchers[i], top) {
			p.found(i)
		}
	}
}

// firstMatch reports whether m matches an element below top, stopping at
// the first, where Colly's Find would look (from the top's elements).
func firstMatch(m cascadia.Selector, top *html.Node) bool {
	for n := top.FirstChild; n != nil; n = n.NextSibling {
		if n.Type == html.ElementNode && m.MatchFirst(n) != nil {
			return true
		}
	}
	return false
}

// failed scores a 2xx Colly sent to OnError; a failure of the target
// breaks the structure evidence.
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

// Register wires the validator into c (a colly.CollectorOption), before
// the breaker and any OnHTML callback that asks VerdictOf; register each
// clone too (Clone copies no callbacks). HEAD requests are not judged.
func (v *Validator) Register(c *colly.Collector) {
	c.OnResponse(func(r *colly.Response) {
		if r.Request.Method == http.MethodHead {
			return // a HEAD (Colly's CheckHead) has no body: not a page
		}
		v.pages.put(r.Request, newPage(v.rules, r, c.MaxBodySize))
	})
	if len(v.selectors) > 0 {
		c.OnHTML(v.group, func(e *colly.HTMLElement) {
			if p := v.pages.get(e.Request); p != nil {
				v.matched(p, e)
			}
		})
	}
	c.OnScraped(func(r *colly.Response) {
		if p := v.pages.get(r.Request); p != nil {
			v.finish(p)
		}
	})
	c.OnError(func(r *colly.Response, err error) {
		v.failed(r, err, c.MaxBodySize)
	})
}

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
	return len(v.Reasons) > 0 && !slices.ContainsFunc(v.Reasons, func(r Reason) bool { return r.Kind != KindStructure })
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
