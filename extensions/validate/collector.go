package validate

import (
	"net/http"

	"github.com/gocolly/colly/v2"
)

// Register wires the validator into c: an OnResponse that scores status,
// size and body checks, one OnHTML that records selector hits on Colly's
// own parse, an OnScraped that fixes the verdict, and an OnError that
// scores the 2xx responses Colly v2.3.0 sends there and notes the target's
// failures. Register it before the breaker that consults it, and before any
// OnHTML callback that asks VerdictOf. Its method value is a
// colly.CollectorOption. Colly's Clone copies no callbacks: register each
// clone. A HEAD request (Colly's CheckHead sends one before each GET) is
// not a page and is not judged.
//
// The structure check rides on Colly's HTML parse; the body is never
// parsed a second time. When no rule has Element checks, the OnHTML
// selector is the document's head (which the parser always makes), the
// cheapest for Colly to walk the parse for, and the callback looks for each
// Require selector in that same parsed document, stopping at its first
// match. With Element checks, which see every matching element, the
// selector is the group of every selector the rules name, so the document
// is walked once however many there are. Colly v2.3.0 sends 203-299
// responses to OnError without parsing them; the validator parses those
// once itself.
func (v *Validator) Register(c *colly.Collector) {
	c.OnResponse(func(r *colly.Response) {
		if r.Request.Method == http.MethodHead {
			return // a HEAD (Colly's CheckHead) has no body: not a page
		}
		v.pages.put(r.Request, newPage(v.rules, r, c.MaxBodySize))
	})
	switch {
	case len(v.selectors) == 0:
	case v.elementChecks:
		c.OnHTML(v.group, func(e *colly.HTMLElement) {
			if p := v.pages.get(e.Request); p != nil {
				v.matched(p, e)
			}
		})
	default:
		c.OnHTML(rootSelector, func(e *colly.HTMLElement) {
			if p := v.pages.get(e.Request); p != nil {
				v.rootMatched(p, e)
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
