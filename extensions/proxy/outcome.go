package proxy

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// outcome is what one attempt says about the proxy that carried it, not
// about the site: a site's 404 or 500 carried back is the proxy's
// success. Snapshot.Outcomes counts them by name.
type outcome uint8

const (
	// carried: the proxy delivered the request and brought the site's
	// answer back, whatever it was.
	carried outcome = iota
	// connectFailed: the proxy could not be reached: its address refused
	// or timed out, its name did not resolve, the TLS handshake with it
	// failed (Go's "proxyconnect" errors).
	connectFailed
	// authFailed: the proxy refused the credentials (407, or a SOCKS5
	// authentication failure).
	authFailed
	// proxyError: the proxy answered an error it says is its own (an
	// RFC 9209 Proxy-Status naming an error of the proxy's).
	proxyError
	// blocked: a site answers 401/403 through this proxy but not through
	// the others (Record's view across proxies).
	blocked
	// outlier: a failure that may be the proxy's or the site's, through a
	// proxy failing most of what it carries while the others carry most
	// of theirs, from a site that answers other proxies.
	outlier
	// notJudged says nothing about the proxy: a cancelled request, a
	// failure that the proxy or the site may have caused alike (a 502
	// without a mark, a reset mid-body, a timeout), no proxy used.
	notJudged

	numOutcomes = iota
)

var outcomeNames = [numOutcomes]string{"carried", "connect_failed", "auth_failed", "proxy_error", "blocked", "outlier", "not_judged"}

func (o outcome) String() string { return outcomeNames[o] }

// failure reports whether o counts against the proxy.
func (o outcome) failure() bool {
	return o == connectFailed || o == authFailed || o == proxyError || o == blocked || o == outlier
}

// class is o as the proxy's circuit records it.
func (o outcome) class() circuit.Class {
	switch {
	case o == carried:
		return circuit.Success
	case o.failure():
		return circuit.Degraded
	}
	return circuit.Excluded
}

// classify says what one attempt through a proxy says about that proxy:
// err is the attempt's error, status the HTTP status (0 when no answer
// came back) and h the answer's header (may be nil), as a RoundTripper
// sees them (see Track) or as Colly's OnError and OnResponse do. With a
// status, err is ignored (Colly turns every non-2xx status into an error
// of its text).
//
// What blames the proxy is what only the proxy can have caused:
//   - a dial, DNS or TLS failure reaching it (http.Transport wraps them
//     all as *net.OpError with Op "proxyconnect", for http and https
//     targets alike): connectFailed;
//   - 407, as an answer (http targets) or to the CONNECT (https targets,
//     the error "Proxy Authentication Required"), or a SOCKS5
//     authentication failure: authFailed;
//   - an answer of 400 or more carrying an RFC 9209 Proxy-Status whose
//     last entry names an error of the proxy's own (proxy_internal_error,
//     proxy_internal_response, proxy_configuration_error,
//     proxy_loop_detected, http_request_denied, connection_limit_reached)
//     and no received-status: proxyError.
//
// A 502, 503 or 504 without that mark is notJudged: through a plain-http
// proxy the proxy relays the site's own 502 unchanged and answers its own
// failures with the same codes, so one answer cannot tell them apart, and
// charging the proxy would eject every healthy proxy whenever a site
// fails. A CONNECT refused with 502/503/504 is notJudged for the same
// reason: the proxy failed to reach the site, or says so. Telling those
// apart takes the view across proxies (one proxy failing where the others
// reach the same sites fine). Any other answer is carried; any other
// error (timeouts, resets, cancels) is notJudged, and so is ErrAllEjected
// (no proxy carried the request).
func classify(err error, status int, h http.Header) outcome {
	if status != 0 {
		switch {
		case status == http.StatusProxyAuthRequired:
			return authFailed
		case status >= 400 && ownProxyError(h):
			return proxyError
		case status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
			return notJudged
		}
		return carried
	}
	if err == nil {
		return carried
	}
	if errors.Is(err, ErrAllEjected) {
		return notJudged
	}
	var op *net.OpError
	if errors.As(err, &op) {
		switch {
		case op.Op == "proxyconnect":
			return connectFailed
		case op.Op == "socks connect" && op.Err != nil && socksAuth[op.Err.Error()]:
			return authFailed
		}
	}
	// A CONNECT answered with another status than 200 comes back as an
	// error of the status's text alone.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if err.Error() == http.StatusText(http.StatusProxyAuthRequired) {
		return authFailed
	}
	return notJudged
}

// socksAuth are the texts of the errors Go's SOCKS5 dialer returns when
// the proxy refuses the credentials.
var socksAuth = map[string]bool{"username/password authentication failed": true, "no acceptable authentication methods": true}

// ownErrors are the RFC 9209 error types that blame the intermediary
// itself rather than the next hop (the site).
var ownErrors = map[string]bool{"proxy_internal_error": true, "proxy_internal_response": true,
	"proxy_configuration_error": true, "proxy_loop_detected": true, "http_request_denied": true,
	"connection_limit_reached": true}

// ownProxyError reports whether h's Proxy-Status says the proxy nearest
// the client (the last entry) answered with an error of its own.
func ownProxyError(h http.Header) bool {
	vals := h.Values("Proxy-Status")
	if len(vals) == 0 {
		return false
	}
	members := splitQuoted(strings.Join(vals, ","), ',')
	last := members[len(members)-1]
	own, received := false, false
	for _, p := range splitQuoted(last, ';')[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch strings.ToLower(k) {
		case "error":
			own = ownErrors[strings.Trim(v, `"`)]
		case "received-status":
			received = true
		}
	}
	return own && !received
}

// splitQuoted splits s at sep outside double-quoted strings.
func splitQuoted(s string, sep byte) []string {
	var out []string
	quoted, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case c == '\\' && quoted:
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
