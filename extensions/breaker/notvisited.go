package breaker

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/gocolly/colly/v2"
)

// NotVisited hands the breaker a URL that Colly's Visit (or Request.Visit,
// Post, Request) refused with err before any callback ran, so the ending
// names it. Colly refuses some URLs before a single callback runs — past
// its MaxRequests cap, say — and no extension sees them otherwise:
//
//	if err := e.Request.Visit(link); err != nil {
//		b.NotVisited(e.Request.AbsoluteURL(link), err)
//	}
//
// A URL left by a limit of Colly's (ErrMaxRequests, a full queue, an
// error of its storage) is listed unfinished, and NotVisited reports true.
// What the scraper chose not to fetch is not work left, and is not listed:
// a URL already visited, one past MaxDepth, one its URL or domain filters or
// robots.txt forbid, an empty URL, a URL that answered 404 or 410 in this
// run. Nor is a request that was made: a synchronous collector's Visit
// returns the fetch's own error (a status, a failed round trip, a
// refusal of the breaker's), which the breaker accounted for. A nil err
// lists nothing. The
// OnNotVisited hooks hear of each URL listed (a checkpoint keeps it
// pending for the next run).
func (b *Breaker) NotVisited(rawURL string, err error) bool {
	if err == nil || rawURL == "" || chosenNotToVisit(err) || collyx.IsFetchError(err) {
		return false
	}
	u, perr := url.Parse(rawURL)
	if perr != nil || u.Host == "" {
		return false // Colly could not have fetched it either
	}
	if b.gone.Has(u.String()) {
		return false // it answered 404 or 410 in this run: nothing left to do
	}
	b.markUnfinished(Unfinished{URL: u.String(), Domain: hostOf(u.Host), Reason: "not visited: " + err.Error()})
	if len(b.onNotVisited) > 0 {
		r := &colly.Request{URL: u, Method: "GET", Headers: &http.Header{}, Ctx: colly.NewContext()}
		for _, f := range b.onNotVisited {
			f(r, err)
		}
	}
	return true
}

// chosenNotToVisit reports whether err is Colly saying the scraper's own
// settings keep the URL out: nothing was left undone.
func chosenNotToVisit(err error) bool {
	var av *colly.AlreadyVisitedError
	if errors.As(err, &av) {
		return true
	}
	for _, e := range []error{
		colly.ErrMaxDepth, colly.ErrForbiddenDomain, colly.ErrForbiddenURL,
		colly.ErrNoURLFiltersMatch, colly.ErrRobotsTxtBlocked, colly.ErrMissingURL,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
