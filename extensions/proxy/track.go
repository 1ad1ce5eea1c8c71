package proxy

import (
	"context"
	"net/http"
	"sync/atomic"
)

// trackKey is the context key of the slot Track puts in a request.
type trackKey struct{}

// Track returns r with a slot in its context that ProxyFunc fills with
// the URL of the proxy it chooses for r, and a function reading it after
// the round trip ("" when no proxy was chosen): what to give Record. A
// RoundTripper wrapped around the transport whose Proxy is ProxyFunc
// calls it on each request it passes down.
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
	slot := new(atomic.Pointer[string])
	r = r.WithContext(context.WithValue(r.Context(), trackKey{}, slot))
	return r, func() string {
		if s := slot.Load(); s != nil {
			return *s
		}
		return ""
	}
}

// tell fills r's Track slot, if it has one, with proxy.
func tell(r *http.Request, proxy string) {
	if slot, ok := r.Context().Value(trackKey{}).(*atomic.Pointer[string]); ok {
		slot.Store(&proxy)
	}
}
