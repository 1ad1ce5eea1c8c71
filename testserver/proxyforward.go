package testserver

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// hopHeaders are the headers that concern one connection only, or the
// proxy itself: a proxy does not pass them on, either way.
var hopHeaders = []string{"Proxy-Connection", "Proxy-Authorization", "Proxy-Authenticate", "Connection",
	"Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward waits d.delay, sends r on to the target its absolute URL names,
// which must be on loopback (a test's traffic stays on the machine), copies
// the answer back, and logs the status the client is sent.
// The wait and the forward end when the client goes away or the proxy is
// closed.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, d decision) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(p.ctx, cancel)()
	if d.delay > 0 {
		t := time.NewTimer(d.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			abort(w)
			return
		}
	}
	if err := checkLoopback(net.JoinHostPort(r.URL.Hostname(), "80")); err != nil {
		p.answered(d, http.StatusForbidden)
		http.Error(w, "testserver proxy: only loopback targets are forwarded: "+err.Error(), http.StatusForbidden)
		return
	}
	out := r.Clone(ctx)
	out.RequestURI = ""
	out.URL = &url.URL{Scheme: r.URL.Scheme, Host: r.URL.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	out.Close = false
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	p.sending(d)
	resp, err := p.fwd.RoundTrip(out)
	if err != nil {
		if ctx.Err() != nil {
			abort(w)
			return
		}
		p.answered(d, http.StatusBadGateway)
		http.Error(w, "testserver proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, h := range hopHeaders {
		w.Header().Del(h)
	}
	p.answered(d, resp.StatusCode)
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body) // a client gone away, or a target cutting its answer, is not the proxy's error
}
