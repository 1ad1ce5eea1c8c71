package proxy

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sync"
)

// trackKey is the context key of the slot Track puts in a request.
type trackKey struct{}

// Track returns r with a slot in its context that ProxyFunc fills with
// the URL of the proxy it chooses for r, and a function reading it after
// the round trip ("" when no proxy was chosen): what to give Record. A
// RoundTripper wrapped around the transport whose Proxy is ProxyFunc
// calls it on each request it passes down. Sending the returned request
// again (after a failure its proxy explains) makes ProxyFunc choose a
// proxy not yet tried for it; when every proxy that admits one was
// tried, it fails with ErrAllEjected rather than send the site the same
// request twice through one proxy. A redirect's hop may go through a
// proxy its chain used.
//
// Colly's Request.ProxyURL cannot be relied on for this: whenever the
// http.Client has a Timeout (Colly's default client has 10 s), net/http
// hands the transport a copy of the request, so the context ProxyFunc
// (and Colly's own switcher) sets never reaches Colly, and
// Request.ProxyURL stays empty (gocolly/colly#366, #708). The slot lives
// in the context every copy shares, so it works for those copies, for
// requests with a body, and for each hop of a redirect (the client sends
// each through the RoundTripper).
func Track(r *http.Request) (*http.Request, func() string) {
	s := new(slot)
	r = r.WithContext(context.WithValue(r.Context(), trackKey{}, s))
	return r, func() string {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.chosen
	}
}

// slot is a tracked request's: the proxy chosen last, and every member
// tried.
type slot struct {
	mu     sync.Mutex
	chosen string
	tried  []*member
}

// slotOf returns r's Track slot, nil if it has none.
func slotOf(r *http.Request) *slot {
	s, _ := r.Context().Value(trackKey{}).(*slot)
	return s
}

// tell fills s, if not nil, with m, chosen.
func (s *slot) tell(m *member) {
	if s != nil {
		s.mu.Lock()
		s.chosen = m.str
		s.tried = append(s.tried, m)
		s.mu.Unlock()
	}
}

// has reports whether m was tried for s's request.
func (s *slot) has(m *member) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.tried, m)
}

// Attribute returns f, a proxy function of the caller's own over the
// pool's proxies, telling a request passed through Track which proxy f
// chose, as ProxyFunc does: the breaker wraps the collector's proxy
// function with it (breaker.Config.Proxies), so attempts are charged to
// their proxies whoever chose them. When f gives a request that is sent
// again a proxy already tried for it (a rotation shared by concurrent
// requests can), f is asked again, at most once per proxy of the pool.
// f should ask Ejected before it hands a proxy out. A proxy not in the
// pool is not told.
func (p *Pool) Attribute(f func(*http.Request) (*url.URL, error)) func(*http.Request) (*url.URL, error) {
	return func(r *http.Request) (*url.URL, error) {
		sl := slotOf(r)
		for asked := 1; ; asked++ {
			before := sl.count()
			u, err := f(r)
			if u == nil || sl == nil || sl.count() != before {
				return u, err // no proxy, no slot, or told by the pool's own ProxyFunc
			}
			p.mu.Lock()
			m := p.lookupLocked(u.String())
			p.mu.Unlock()
			if m == nil {
				return u, err
			}
			if !sl.has(m) || asked >= len(p.members) {
				sl.tell(m)
				return u, err
			}
		}
	}
}

// count is how many proxies s's request was given, 0 for a nil s.
// forget clears the proxy chosen last, if s is not nil: this try went
// through none.
func (s *slot) forget() {
	if s != nil {
		s.mu.Lock()
		s.chosen = ""
		s.mu.Unlock()
	}
}

func (s *slot) count() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tried)
}
