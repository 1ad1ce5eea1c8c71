// Package http2 gives the breaker's transport the name net/http's Client
// recognises as a transport that honours each request's context. It has
// nothing to do with HTTP/2 beyond that name.
//
// A Client with a Timeout (Colly's has 10 s) cancels a request through the
// request's context only when its transport is net/http's own or one whose
// type prints as "*http2.Transport" (net/http, client.go,
// knownRoundTripperImpl, there to recognise golang.org/x/net/http2). Any
// other transport gets the legacy path, kept for transports older than
// contexts: a goroutine and a timer of the client's for every request, a
// Request.Cancel channel, and a goroutine of net/http's transport to
// watch it. The breaker's transport hands every request's context to the
// transport it wraps, so when that is net/http's own it honours the
// context as fully as net/http's own does, and is given this name.
package http2

import "net/http"

// Transport is the breaker's transport under the name net/http's Client
// trusts to honour contexts. Wrap only a transport that does.
type Transport struct{ http.RoundTripper }

// RoundTrip is the wrapped transport's.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.RoundTripper.RoundTrip(req)
}
