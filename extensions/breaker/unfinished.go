package breaker

import (
	"sort"
	"sync"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/urlset"
	"github.com/gocolly/colly/v2"
)

// DefaultUnfinishedSample is how many unfinished URLs a breaker lists;
// past it, it counts them per domain.
const DefaultUnfinishedSample = 10_000

// unfinishedList is the breaker's unfinished URLs: a sample listed by URL,
// counts per domain past it.
type unfinishedList struct {
	limit  int        // < 0: no bound
	listed urlset.Map // URL → Unfinished

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

// Unfinished returns the URLs not collected and not attempted since (see
// Unfinished), with the reason: at most the sample
// (DefaultUnfinishedSample) listed, sorted by URL, and every one counted
// per domain.
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
type goneSet struct{ urlset.Recent }

// settled records an attempt of u: a 404 or 410 makes u gone, any other
// answer but a cancellation not.
func (s *goneSet) settled(u string, class circuit.Class, cancelled bool) {
	if class == circuit.Gone {
		s.Add(u)
	} else if !cancelled {
		s.Remove(u)
	}
}
