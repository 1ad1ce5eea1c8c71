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
		// It honours each request's context, and so does t over it: the
		// client may cancel through the context (see internal/http2).
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

// headerKey identifies one request's header map: how the transport finds
// the gate's record of a request (collyx.HeaderKey).
type headerKey = collyx.HeaderKey

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	a := t.b.attempts.loadHeader(collyx.HeaderOf(req.Header))
	if a == nil && req.Response != nil {
		// A redirect's next request: its attempt is its first request's,
		// gated in OnRequestHeaders (bare.go).
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
		// No callback of the breaker's saw it: a clone's request, a
		// robots.txt fetch, a redirect of either. Gated here (bare.go).
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
			// Known now, inside Colly's LimitRule slot: record it before
			// the slot frees.
			t.b.settle(a, classifyError(err), err)
		}
		return resp, err
	}
	if a.bare {
		if req.Response != nil {
			a.target = req.URL // a redirect's hop answered (bare.go)
		}
		// What Colly's response-header hook records for a gated request.
		a.status, a.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		if class := Classify(a.status, nil); class != circuit.Success {
			t.b.settleBare(a, t.b.throttleClass(class, a.status, a.retryAfter), nil)
		} else if t.b.validator != nil && a.status < 300 {
			a.bareHeader = resp.Header // kept with the body for the validator
		}
	}
	// The answer is not in until its body is: the attempt keeps its room
	// while Colly reads it, and a body cut short is recorded as the cut.
	a.reading = true
	a.body = watchedBody{ReadCloser: resp.Body, b: t.b, a: a, keep: a.bare && !a.settled && a.bareHeader != nil}
	resp.Body = &a.body
	return resp, nil
}

// watchedBody follows the read of an answer's body, on the goroutine that
// sent the request. A read that ends in an error other than io.EOF is a
// body cut short: the origin dropped its answer mid-way, which counts
// against it whatever status the headers said.
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

// end gives the attempt's room back if its outcome is already recorded
// (a status that decided the class); otherwise its outcome will.
func (w *watchedBody) end() {
	w.done = true
	if w.a.latency == 0 {
		// The site's latency: from the gate to the body read. Colly
		// sleeps a LimitRule's Delay after this, before OnResponse.
		w.a.latency = time.Since(w.a.start)
	}
	w.a.reading = false
	if w.a.settled {
		w.b.releaseSlot(w.a)
	} else if w.a.bare {
		// Read whole, or as far as its reader wanted: judged now, since
		// no OnScraped of the breaker's will come for it.
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

// roundTrip applies the domain's adaptive timeout, or the fleet's prior.
// A request that leaves before there is either is watched: once the fleet
// has a prior, it is cut when it outlives it, so the first requests into a
// site that hangs from the start do not wait for the client's own timeout.
// Both are kept by the transport's one deadline watch (deadline.go); a is
// the gate's record of the request, nil for one the breaker did not gate.
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
	// The collector's context is the only ancestor of a gated request's
	// context that can end it before its deadline (Colly makes every
	// request's context of it): the watch listens to it once per crawl
	// rather than to every request's parent.
	var crawl context.Context
	if a != nil && a.crawl != nil {
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
