// Package validate scores every page a Colly collector fetches, so that a
// 200 that carries no data counts as a failure instead of a success.
//
// A page is valid when its status is 2xx, its body reaches a byte floor
// (DefaultMinBytes unless MinBytes says otherwise) and was not cut short,
// and every Require selector matches; each failed check is a Reason. Read
// a page's Verdict from your callbacks with VerdictOf; a breaker reads it
// through Check.
//
//	v, err := validate.New(validate.Config{Checks: []validate.Check{validate.MinBytes(1024), validate.Require("div.product h1.title")}})
//	err = breakwater.Use(c, v, b) // the validator before the breaker
//	c.OnScraped(func(r *colly.Response) {
//		if verdict, _ := v.VerdictOf(r); !verdict.Valid() {
//			return // not data
//		}
//		...
//	})
//
// Config.Pages give page types rules of their own; Element and Body add
// checks of your own. Full-size, healthy 2xx pages that keep missing the
// same structure diagnose their domain selector_broken (see BrokenDomain),
// and Judge makes the run end as an error (exit 1) rather than as tripped
// (exit 2).
package validate
