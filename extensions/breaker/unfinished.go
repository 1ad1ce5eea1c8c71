package breaker

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/breakwater-crawl/breakwater/internal/packmap"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/gocolly/colly/v2"
)

// DefaultUnfinishedSample is how many unfinished URLs a breaker lists;
// past it, it counts them per domain.
const DefaultUnfinishedSample = 10_000

// unfinishedList is the breaker's unfinished URLs: a sample listed by URL,
// counts per domain past it.
type unfinishedList struct {
	limit  int            // < 0: no bound
	listed packmap.URLMap // URL → Unfinished

	mu    sync.Mutex
	over  map[string]int // domain → URLs counted past the sample
	overN int
}

func (l *unfinishedList) mark(u Unfinished) {
	if l.limit < 0 || l.listed.Len() < int64(l.limit) {
		l.listed.Store(u.URL, u)
		return
	}
	if _, ok := l.listed.Load(u.URL); ok {
		l.listed.Store(u.URL, u) // listed already: the latest reason
		return
	}
	l.mu.Lock()
	if l.over == nil {
		l.over = make(map[string]int)
	}
	l.over[u.Domain]++
	l.overN++
	l.mu.Unlock()
}

// left takes r's URL off the list: it left.
func (l *unfinishedList) left(r *colly.Request) {
	if !l.listed.Empty() {
		l.listed.Delete(r.URL.String())
	}
}

// UnfinishedURLs is the breaker's unfinished list: the URLs it lists,
// and how many there are per domain, listed or not.
type UnfinishedURLs struct {
	// URLs lists at most the sample (DefaultUnfinishedSample), sorted by URL.
	URLs []Unfinished
	// PerDomain counts every unfinished URL by domain: those listed, and
	// those counted past the sample.
	PerDomain map[string]int
	// Total is the sum of PerDomain.
	Total int
	// Truncated is how many of them are counted but not listed. A URL
	// counted past the sample stays counted when it is sent again (only
	// listed URLs are taken off), so past the sample the counts are an
	// upper bound.
	Truncated int
}

// Unfinished returns the URLs not collected and not attempted since, as
// UnfinishedURLs says.
func (b *Breaker) Unfinished() UnfinishedURLs {
	s := UnfinishedURLs{PerDomain: map[string]int{}}
	b.unfinished.listed.RangeValues(func(v any) bool {
		s.URLs = append(s.URLs, v.(Unfinished))
		return true
	})
	sort.Slice(s.URLs, func(i, j int) bool { return s.URLs[i].URL < s.URLs[j].URL })
	for _, u := range s.URLs {
		s.PerDomain[u.Domain]++
	}
	l := &b.unfinished
	l.mu.Lock()
	for d, n := range l.over {
		s.PerDomain[d] += n
	}
	s.Truncated = l.overN
	l.mu.Unlock()
	s.Total = len(s.URLs) + s.Truncated
	return s
}

// goneSet remembers the URLs gone last (404, 410), so a retry of one that
// is cut or refused is not listed as work left; a forgotten URL is listed.
type goneSet struct{ packmap.RecentURLs }

// settled records an attempt of u: a 404 or 410 makes u gone, any other
// answer but a cancellation not.
func (s *goneSet) settled(u string, class circuit.Class, cancelled bool) {
	if class == circuit.Gone {
		s.Add(u)
	} else if !cancelled {
		s.Remove(u)
	}
}

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

// Unfinished is a URL that was not collected: refused while its domain's
// circuit was open, throttled past its retry budget or its domain's
// horizon, cancelled by the crawl's own end, or failed (degraded, invalid,
// blocked, another 4xx) with no retry since. Until a later attempt of the
// same URL leaves, it stays listed, so nothing is lost without a trace,
// checkpoint or not. A 404 or 410, or a request the user's callbacks
// aborted, is not unfinished.
type Unfinished struct {
	URL     string    `json:"url"`
	Domain  string    `json:"domain"`
	Reason  string    `json:"reason"`
	RetryAt time.Time `json:"retry_at,omitzero"`
}

// Judge reports, for the run's outcome, the domains whose circuit is not
// closed and the URLs left unfinished (both: tripped, reschedule), and
// counts 2xx answers as valid pages when no validator judges them.
func (b *Breaker) Judge() outcome.Evidence {
	var ev outcome.Evidence
	// Not from Stats: a broad crawl's million domains need no map each.
	success, open, findings := b.set.Judge()
	sort.Strings(open)
	if len(open) > 0 {
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Tripped, Kind: "circuit_open",
			Reason:  fmt.Sprintf("circuit not closed for %s", strings.Join(open, ", ")),
			Domains: open})
	}
	un := b.Unfinished()
	if len(un.PerDomain) > 0 {
		var doms, parts []string
		for d, n := range un.PerDomain {
			doms = append(doms, d)
			parts = append(parts, fmt.Sprintf("%s: %d", d, n))
		}
		sort.Strings(doms)
		sort.Strings(parts)
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Tripped, Kind: "unfinished",
			Reason: fmt.Sprintf("%d URLs not collected and not attempted since: %s (%s)",
				un.Total, causes(un), strings.Join(parts, ", ")),
			Domains: doms})
	}
	ev.Findings = append(ev.Findings, findings...)
	if b.proxies != nil {
		if err := b.proxies.ClientSide(); err != nil {
			ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Error, Kind: "client_side_suspect", Reason: err.Error()})
		}
	}
	if b.validator == nil {
		ev.Valid, ev.Counts = success+b.cachedOK.Load(), true
	}
	return ev
}

// causes says why the unfinished URLs were left, most common first: "3
// failed as invalid pages, 1 refused while its circuit was open".
func causes(un UnfinishedURLs) string {
	n := map[string]int{}
	for _, u := range un.URLs {
		n[causeOf(u.Reason)]++
	}
	if un.Truncated > 0 {
		n["past the listed sample"] += un.Truncated
	}
	keys := slices.Collect(maps.Keys(n))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(n[b]-n[a], strings.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", n[k], k)
	}
	return strings.Join(parts, ", ")
}

// causeOf names the cause an Unfinished reason gives, in a few words.
func causeOf(reason string) string {
	switch {
	case strings.HasPrefix(reason, "cancelled"):
		return "cancelled by the crawl's end"
	case strings.HasPrefix(reason, "failed: "):
		class, _, _ := strings.Cut(strings.TrimPrefix(reason, "failed: "), " ")
		switch class {
		case circuit.Invalid.String():
			return "failed as invalid pages (a 2xx the validator rejected)"
		case circuit.Degraded.String():
			return "failed as degraded (5xx, timeouts, cut bodies)"
		}
		return "failed as " + class
	case strings.HasPrefix(reason, "throttled"):
		return "throttled (429)"
	case strings.HasPrefix(reason, "not visited"):
		return "not visited (a Colly limit or filter)"
	case strings.Contains(reason, "answered 401/403 to every request"):
		return "blocked (401/403 to every request: fix the client)"
	case strings.Contains(reason, "paused or at its most"):
		return "held back (the domain paused or at its most requests in flight)"
	case strings.Contains(reason, "half-open"), strings.Contains(reason, "is open"):
		return "refused while its circuit was open"
	}
	return "left for another reason"
}
