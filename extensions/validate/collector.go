package validate

import (
	"net/http"

	"github.com/gocolly/colly/v2"
)

// Register wires the validator into c: an OnResponse that scores status,
// size and body checks, one OnHTML that records selector hits on Colly's
// own parse (on the document's head, or on every element a selector
// matches when a rule has Element checks; see the package documentation),
// an OnScraped that fixes the verdict, and an OnError that scores the 2xx
// responses Colly v2.3.0 sends there and notes the target's failures. Register it before the breaker that consults it, and
// before any OnHTML callback that asks VerdictOf. Its method value is a
// colly.CollectorOption. Colly's Clone copies no callbacks: register each
// clone. A HEAD request (Colly's CheckHead sends one before each GET) is
// not a page and is not judged.
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
