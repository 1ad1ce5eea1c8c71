// Package validate scores every page a Colly collector fetches, so that a
// 200 that carries no data counts as a failure instead of a success.
//
// A crawl that only checks for errors walks off a cliff politely: the target
// starts answering with clean 200s that hold a 900-byte consent shell, and
// every one of them looks like success. A page is usable data only when
// three checks pass:
//
//  1. status: the status code is 2xx ("status 503");
//  2. size: the body reaches a byte floor, DefaultMinBytes (1024) unless
//     MinBytes says otherwise ("below floor: 903 < 1024 bytes"), and was not
//     cut off by Colly's MaxBodySize ("truncated: ..."), which Colly itself
//     does not report;
//  3. structure: every Require selector matches at least one element
//     (`missing selector "div.product h1.title"`), and every custom Element
//     or Body check passes.
//
// Each failed check is a Reason with a Kind and a text. The Verdict of a
// page is readable from the user's own callbacks with VerdictOf, so invalid
// pages are not stored as data, and a breaker reads it through Check, which
// returns an *InvalidError (errors.Is(err, ErrInvalid)) whose text lists the
// reasons: the page is of class invalid and counts against its domain.
//
//	v, err := validate.New(validate.MinBytes(1024), validate.Require("div.product h1.title"))
//	if err != nil { ... }                 // a bad selector or floor, quoted
//	c := colly.NewCollector(colly.Async(true))
//	breakwater.Use(c, v, b)               // the validator before the breaker
//	c.OnScraped(func(r *colly.Response) {
//		if verdict, _ := v.VerdictOf(r); !verdict.Valid() {
//			return // not data
//		}
//		...
//	})
//
// # Rules per page type
//
// A listing page has no product title. Page(pattern, checks...) scopes
// checks to the URLs matching a regular expression; rules are tried in
// order and the first match wins, alone. Each rule is complete on its own:
// status 2xx, its own MinBytes or DefaultMinBytes, its own structure
// checks. Checks given to New directly form the rule for every page no Page
// rule matches; when there are none, such pages are still scored on status
// and DefaultMinBytes, so an unexpected page type cannot pass as data
// unseen. Give a Page rule with MinBytes(0) and no structure to accept a
// page type as it comes.
//
// # Custom checks
//
// An ElementChecker looks at each element Colly's parse found for a
// selector ("the price parses as a number"); a BodyChecker looks at the
// whole response ("the JSON has a field items"). Both are one-method
// interfaces with function adapters (ElementFunc, BodyFunc), added with
// Element and Body; their failures are structure reasons.
//
// # One parse, state per request
//
// The structure check rides on Colly's own HTML parse: Register adds one
// OnHTML callback. When no rule has Element checks its selector is the
// document's head (which the parser always makes), the cheapest for Colly
// to walk the parse for, and the callback looks for each selector a
// Require names in that same parsed document, stopping at its first match. With Element checks, which
// see every matching element, the selector is the group of every selector
// the rules name, so the document is walked once however many there are,
// and the callback records which selectors each element matches. The
// verdict is fixed in OnScraped, after every OnHTML ran. The body is never
// parsed a second time. (Colly v2.3.0 sends 203-299 responses to OnError without
// parsing them; the validator parses those once itself.) Bodies that are
// not HTML, such as JSON, binary or empty ones, are not parsed by Colly and
// simply match no selector.
//
// The state of a page is keyed by its *colly.Request, which Colly hands
// unchanged to every callback of one fetch. It is not keyed by the Ctx,
// which a request shares with every child it visits. The key is a weak
// pointer and the entry is deleted by a runtime cleanup once the request is
// garbage, so the table neither leaks nor mixes concurrent requests.
//
// # Target problem or our bug: selector_broken
//
// A degrading target shows 5xx, timeouts, truncated or shrinking bodies,
// while the 200s it still serves parse fine. A broken selector shows the
// opposite: full-size, healthy 200s that every one miss the same structure.
// The validator tells them apart per domain (the host with its port,
// lower-case). When BrokenAfter pages in a row (DefaultBrokenAfter, 3) are
// 2xx, above the floor, not truncated, at least half the median size of the
// domain's recent valid pages, and fail only the structure check, the
// domain is diagnosed selector_broken: the OnBroken hook runs once, a
// zerolog event "selector_broken" is logged when a logger is given, and
// Broken lists the domain with the selectors and the evidence pages, and
// Judge hands it to outcome.Decide as an error finding, so the run ends as
// an error (exit 1) rather than as tripped (exit 2). Judge also counts only
// pages that passed validation as the run's valid pages, so a crawl that
// collected nothing but consent shells ends empty, not complete. Any
// target failure on the domain (5xx, timeout, refused or reset connection,
// a body cut short, a page below the floor or shrunken) and any valid page
// start the count again, so a degrading target is never diagnosed broken.
// 4xx answers and self-inflicted errors (aborts, a breaker's refusals)
// neither count nor reset. A diagnosis stands for the rest of the run.
//
// Why a small window of consecutive pages rather than a verdict over all
// evidence at the end: the breaker stops the evidence. A profile of three
// consecutive failures trips on the third invalid page, and an
// open breaker sends nothing more; a diagnosis that waited for more pages
// would never be made. Three is the shortest trip among the project's
// profiles (the rate-based ones need at least six failures), so with the
// default the diagnosis is complete no later than the page that trips the
// breaker: the validator scores in its OnScraped, which runs before the
// breaker's. One or two would let a pair of odd pages (an out-of-stock
// product without a price) stand for a broken template. With a breaker that
// trips sooner, set BrokenAfter to its limit. Counting pages in a row also
// keeps the diagnosis to a template change: a valid page in between means
// the selector still works.
//
// What it does not tell: a page type that breaks while others on the same
// domain stay valid interleaves valid pages and so is not diagnosed; its
// verdicts still carry the missing selector. And a block or error page
// served full-size with status 200 looks like a changed template; that too
// needs a human, which is what the diagnosis asks for.
//
// Memory on a broad crawl: what the diagnosis keeps of a domain with no
// evidence under way is its valid count and its recent valid page sizes,
// a few bytes encoded (two valid pages of a few KB: 5 bytes, plus the host
// and a map entry), and the scoring state of a request goes with the
// request, at the latest after the next garbage collection.
package validate
