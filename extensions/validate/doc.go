// Package validate scores every page a Colly collector fetches, so that a
// 200 that carries no data counts as a failure instead of a success.
//
// A page is usable data only when its status is 2xx, its body reaches a
// byte floor (DefaultMinBytes unless MinBytes says otherwise) and was not
// cut short, and every Require selector matches. Each failed check is a
// Reason. The page's Verdict is readable from your own callbacks with
// VerdictOf, so invalid pages are not stored as data, and a breaker reads
// it through Check, so they count against their domain.
//
//	v, err := validate.New(validate.MinBytes(1024), validate.Require("div.product h1.title"))
//	if err != nil { ... }         // a bad selector or floor, quoted
//	err = breakwater.Use(c, v, b) // the validator before the breaker
//	c.OnScraped(func(r *colly.Response) {
//		if verdict, _ := v.VerdictOf(r); !verdict.Valid() {
//			return // not data
//		}
//		...
//	})
//
// Page gives a page type its own rule (a listing page has no product
// title); Element and Body add checks of your own. Selectors are matched
// on Colly's own HTML parse: the body is never parsed a second time.
//
// Full-size, healthy 200s that all miss the same structure mean the
// template changed, not that the site is down. After Config.BrokenAfter such pages
// in a row the validator diagnoses the domain selector_broken (see
// BrokenDomain), and Judge makes the run end as an error (exit 1) rather
// than as tripped (exit 2).
package validate
