package breaker

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker/internal/http2"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/internal/deadline"
	"github.com/breakwater-crawl/breakwater/internal/domains"
	"github.com/gocolly/colly/v2"
)

func newTransport(b *Breaker, base http.RoundTripper) *transport {
	t := &transport{b: b, base: base}
	t.cuts.TimeoutOf = func(k any) time.Duration { return b.set.TimeoutFor(k.(*domains.Domain)) }
	t.outer = t
	if _, ok := base.(*http.Transport); ok {
		// Request contexts are honoured: see internal/http2.
		t.outer = &http2.Transport{RoundTripper: t}
	}
	return t
}

// ownTransport returns rt as the breaker's transport, if it is one.
func ownTransport(rt http.RoundTripper) (*transport, bool) {
	if w, ok := rt.(*http2.Transport); ok {
		rt = w.RoundTripper
	}
	t, ok := rt.(*transport)
	return t, ok
}

type transport struct {
	b     *Breaker
	c     *colly.Collector // the collector Register installed it on (its clones share it); nil from wrap
	base  http.RoundTripper
	cuts  deadline.Watch
	outer http.RoundTripper // what is installed: t, or t under the name net/http trusts
}

// headerKey identifies one request's header map (collyx.HeaderKey).
type headerKey = collyx.HeaderKey

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	a := t.b.attempts.loadHeader(collyx.HeaderOf(req.Header))
	if a == nil && req.Response != nil {
		// A redirect's next request: its first request's attempt.
		if a = t.b.attempts.loadHeader(collyx.HeaderOf(firstOf(req).Header)); a != nil && !a.bare {
			if err := t.hop(req, a); err != nil {
				closeBody(req)
				return nil, err
			}
		} else {
			a = nil
		}
	}
	if a == nil {
		// No callback of the breaker's saw it (bare.go).
		var err error
		if a, err = t.gateBare(req); err != nil {
			closeBody(req)
			return nil, err
		}
		if a.waited > time.Millisecond {
			req, a.unwait = patientRequest(req, a.waited, a.crawl)
		}
	}
	if a.refused != nil {
		closeBody(req)
		return nil, a.refused
	}
	a.sent = true
	resp, err := t.roundTrip(req, a)
	if err != nil && a.unwait != nil {
		a.unwait()
	}
	if a.ticket.Domain() == nil {
		return resp, err
	}
	if err != nil {
		switch {
		case a.bare:
			t.b.settleBare(a, classifyError(err), err)
		case !a.settled:
			t.b.settle(a, classifyError(err), err)
		}
		return resp, err
	}
	if a.bare {
		if req.Response != nil {
			a.target = req.URL // a redirect's hop answered (bare.go)
		}
		a.status, a.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		if class := Classify(a.status, nil); class != circuit.Success {
			t.b.settleBare(a, t.b.throttleClass(class, a.status, a.retryAfter), nil)
		} else if t.b.validator != nil && a.status < 300 {
			a.bareHeader = resp.Header // kept with the body for the validator
		}
	}
	// The attempt keeps its room until the body is read.
	a.reading = true
	a.body = watchedBody{ReadCloser: resp.Body, b: t.b, a: a, keep: a.bare && !a.settled && a.bareHeader != nil}
	resp.Body = &a.body
	return resp, nil
}

// watchedBody follows the read of an answer's body: a read ending in an
// error other than io.EOF is a body cut short, a failure of the origin.
type watchedBody struct {
	io.ReadCloser
	b    *Breaker
	a    *attempt
	done bool
	keep bool   // a bare attempt's 2xx body, kept for the validator
	kept []byte // what was read of it
}

func (w *watchedBody) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if w.keep && n > 0 {
		w.kept = append(w.kept, p[:n]...)
	}
	if err != nil && !w.done {
		switch {
		case err == io.EOF:
		case w.a.bare && !w.a.settled:
			w.b.settleBare(w.a, classifyError(err), err)
		default:
			w.b.bodyCut(w.a, err)
		}
		w.end()
	}
	return n, err
}

func (w *watchedBody) Close() error {
	err := w.ReadCloser.Close()
	if w.a.unwait != nil {
		w.a.unwait()
	}
	if !w.done {
		w.end()
	}
	return err
}

// end gives the attempt's room back if its outcome is recorded.
func (w *watchedBody) end() {
	w.done = true
	if w.a.latency == 0 {
		// Before Colly sleeps a LimitRule's Delay.
		w.a.latency = time.Since(w.a.start)
	}
	w.a.reading = false
	if w.a.settled {
		w.b.releaseSlot(w.a)
	} else if w.a.bare {
		class, err := w.b.judgeBare(w.a, w.kept)
		w.b.settleBare(w.a, class, err)
		w.kept = nil
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// roundTrip applies the domain's adaptive timeout through the transport's
// deadline watch; before there is one, the request is watched and cut once
// the fleet's prior says it outlived it.
func (t *transport) roundTrip(req *http.Request, a *attempt) (*http.Response, error) {
	d := t.b.set.Lookup(hostOf(req.URL.Host))
	if d == nil {
		return t.base.RoundTrip(req)
	}
	after, every := t.b.set.TimeoutFor(d), time.Duration(0)
	if after <= 0 {
		if d.Profile.TimeoutMultiple <= 0 {
			return t.base.RoundTrip(req)
		}
		every = max(d.Profile.TimeoutFloor, 100*time.Millisecond)
	}
	// The watch listens to the crawl once, not to every request's parent.
	var crawl context.Context
	if a != nil {
		crawl = a.crawl
	}
	ctx := t.cuts.Start(req.Context(), crawl, d, d.Name, after, every)
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		t.cuts.Release(ctx)
		if te := ctx.TimedOut(); te != nil {
			return nil, te
		}
		return nil, err
	}
	resp.Body = ctx.Body(resp.Body)
	return resp, nil
}

// wrapTransport installs the breaker's transport on c around the one c
// already has, and returns it.
func (b *Breaker) wrapTransport(c *colly.Collector) *transport {
	base := b.baseTransport
	if base == nil {
		cl, err := collyx.Client(c)
		if err != nil {
			b.log.Warn().Str("event", "transport_unknown").Err(err).
				Msg("breaker: cannot see the collector's transport; the breaker's own is not installed (no adaptive timeouts); pass yours as Config.BaseTransport")
			return nil
		}
		base = cl.Transport
		if own, ok := ownTransport(base); ok && own.b == b {
			return own // registered twice
		}
	}
	if base == nil {
		base = http.DefaultTransport
	}
	rt := newTransport(b, base)
	rt.c = c
	c.WithTransport(rt.outer)
	return rt
}

// installed reports whether rt is still c's transport: SetProxy and
// WithTransport after Register replace it.
func (b *Breaker) installed(c *colly.Collector, rt *transport) bool {
	if rt == nil {
		return false
	}
	cl, err := collyx.Client(c)
	if err == nil && cl.Transport == rt.outer {
		return true
	}
	b.warned.Do(func() {
		b.log.Warn().Str("event", "transport_replaced").
			Msg("breaker: the collector's transport was replaced after Register (SetProxy, WithTransport, SetClient); refusals now reach OnError as colly.ErrAbortedBeforeRequest and adaptive timeouts are off: set the transport before Register")
	})
	return false
}
