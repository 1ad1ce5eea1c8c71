package validate

import (
	"net/http"

	"github.com/gocolly/colly/v2"
)

// Register wires the validator into c with an OnResponse, one OnHTML on
// Colly's own parse, an OnScraped and an OnError. Register it before the
// breaker that consults it and before any OnHTML callback that asks
// VerdictOf; Colly's Clone copies no callbacks, so register each clone.
// HEAD requests are not judged. Its method value is a
// colly.CollectorOption.
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
