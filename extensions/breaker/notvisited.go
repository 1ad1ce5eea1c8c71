package breaker

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/gocolly/colly/v2"
)

// NotVisited hands the breaker a URL that Colly's Visit refused with err
// before any callback ran (past MaxRequests, say), which no extension sees
// otherwise:
//
//	if err := e.Request.Visit(link); err != nil {
//		b.NotVisited(e.Request.AbsoluteURL(link), err)
//	}
//
// A URL left by a limit of Colly's is listed unfinished, the OnNotVisited
// hooks hear of it, and NotVisited reports true. What the scraper chose not
// to fetch (visited, past MaxDepth, filtered, robots.txt, 404/410 in this
// run) and errors of requests that were made are not listed.
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
	b.unfinished.mark(Unfinished{URL: u.String(), Domain: hostOf(u.Host), Reason: "not visited: " + err.Error()})
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
