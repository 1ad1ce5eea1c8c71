package breaker

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker/internal/http2"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/internal/deadline"
	"github.com/breakwater-crawl/breakwater/internal/domains"
	"github.com/breakwater-crawl/breakwater/observe"
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
			var unchain func()
			req, unchain = t.chained(req)
			entered := time.Now()
			if err := t.hop(req, a); err != nil {
				if unchain != nil {
					unchain()
				}
				closeBody(req)
				return nil, err
			}
			req = t.patient(req, a, time.Since(entered), unchain)
		} else {
			a = nil
		}
	}
	if a == nil {
		// No callback of the breaker's saw it.
		var unchain func()
		req, unchain = t.chained(req)
		var err error
		if a, err = t.gateBare(req); err != nil {
			if unchain != nil {
				unchain()
			}
			closeBody(req)
			return nil, err
		}
		req = t.patient(req, a, a.waited, unchain)
	}
	if a.refused != nil {
		closeBody(req)
		return nil, a.refused
	}
	a.sent = true
	lent := lendWhileSlow(a, firstOf(req).URL.Host)
	var resp *http.Response
	var err error
	if t.b.proxies != nil {
		resp, err = t.viaProxies(req, a)
	} else {
		resp, err = t.roundTrip(req, a)
	}
	if lent != nil {
		lent.back(resp, a)
	}
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
			a.target = req.URL // a redirect's hop answered
		}
		a.status, a.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		class := t.b.throttleClass(Classify(a.status, nil), a.status, a.retryAfter)
		if spent := t.b.set.Quota(a.ticket, resp.Header, class == circuit.Throttled); spent > 0 {
			a.quotaWait = spent
		}
		if class != circuit.Success {
			t.b.settleBare(a, class, nil)
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

// lendWhileSlow lends the LimitRule slot a holds (see lendSlot) once a
// has waited for its answer longer than its domain's usual (Domain.Slow:
// the adaptive timeout before its floor), most likely into a site that
// hangs, which would otherwise keep a shared slot from every other domain
// until the timeout. The transport calls the lender's back before it
// returns to Colly. nil: nothing to lend.
func lendWhileSlow(a *attempt, host string) *lender {
	d := a.ticket.Domain()
	if a.coll == nil || d == nil {
		return nil
	}
	slow := d.Slow()
	if slow <= 0 {
		return nil
	}
	l := &lender{}
	l.t = time.AfterFunc(slow, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.over {
			return
		}
		// The rule is looked up only for the few requests that are slow.
		if s, p := lendSlot(a.coll, host); s != nil {
			l.lent = s
			d.Lend(p)
		}
	})
	return l
}

// lender is one request's lent slot (lendWhileSlow).
type lender struct {
	t    *time.Timer
	mu   sync.Mutex
	over bool     // the transport is returning: too late to lend
	lent lentSlot // the rule's slots, once one is lent
}

// back takes the lent slot back, if one was lent, waiting for a free one.
// That wait is the crawler's, not the site's: with no slot free, resp's
// body is read first, on the client's timeout, as far as Colly would read
// it (MaxBodySize), and its latency fixed, so the wait neither cuts the
// body nor counts as the site's time.
func (l *lender) back(resp *http.Response, a *attempt) {
	l.t.Stop()
	l.mu.Lock()
	l.over = true
	lent := l.lent
	l.mu.Unlock()
	if lent == nil || lent.tryTake() {
		return
	}
	if resp != nil && resp.Body != nil {
		resp.Body = readAhead(resp.Body, a.coll.MaxBodySize)
		a.measure()
	}
	lent.take()
}

// readAhead reads rc now, up to limit bytes (0: all), and returns a body
// that gives those bytes, then the error the read ended with, or, at the
// limit, the rest of rc.
func readAhead(rc io.ReadCloser, limit int) io.ReadCloser {
	r := io.Reader(rc)
	if limit > 0 {
		r = io.LimitReader(rc, int64(limit))
	}
	data, err := io.ReadAll(r)
	var tail io.Reader = rc
	switch {
	case err != nil:
		tail = errReader{err}
	case limit <= 0 || len(data) < limit:
		tail = errReader{io.EOF}
	}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(data), tail), rc}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

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
	w.a.measure() // before Colly sleeps a LimitRule's Delay
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
	if ht, ok := base.(*http.Transport); ok && ht.Proxy != nil && b.proxies != nil {
		// A proxy function of the user's own: its choices are told to the
		// pool's attribution too.
		ht.Proxy = b.proxies.Attribute(ht.Proxy)
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

// Bare attempts: the requests no callback of the breaker's saw (a
// clone's, robots.txt), gated here, and redirect hops to other hosts.

// firstOf returns the request a redirect chain started with.
func firstOf(req *http.Request) *http.Request {
	for req.Response != nil && req.Response.Request != nil && req.Response.Request != req {
		req = req.Response.Request
	}
	return req
}

// bareRequest is the colly.Request a bare attempt reports; it has no
// collector to Visit or Retry through.
func bareRequest(req *http.Request) *colly.Request {
	return &colly.Request{URL: req.URL, Method: req.Method, Headers: &req.Header, Host: req.Host, Ctx: colly.NewContext()}
}

// isRobots reports whether req is Colly's robots.txt fetch: gated and
// counted, never listed unfinished (the Visit that needed it says so).
func isRobots(req *http.Request) bool {
	return req.Method == http.MethodGet && req.URL.Path == "/robots.txt"
}

// gateBare gates req at the transport: its attempt, or the refusal.
func (t *transport) gateBare(req *http.Request) (*attempt, error) {
	b := t.b
	host := hostOf(req.URL.Host)
	cr := bareRequest(req)
	if req.Response != nil {
		// A redirect's hop: recorded under the chain's first URL.
		first := firstOf(req)
		cr.URL, cr.Method = first.URL, first.Method
	} else if !b.hopOf.Empty() {
		// A retry of the target a bare hop ended at uncollected: Colly's
		// Retry requests the target; recorded under the chain's first URL.
		if v, ok := b.hopOf.Load(req.URL.String()); ok {
			cr.URL = v.(*url.URL) // until the target is collected
		}
	}
	d, open, err := b.pin(host)
	if open != nil {
		if err != nil {
			b.log.Error().Str("event", "breaker_store_error").Str("url", req.URL.String()).Err(err).Msg("breaker: no circuit for the domain; request refused")
		}
		b.refuseBare(cr, req, open)
		return nil, open
	}
	entered := time.Now()
	tk, left, ep, waitErr, open := t.admit(req, d, true)
	if waitErr != nil {
		return nil, b.heldPast(t.crawl(), cr, req, d, waitErr)
	}
	if open != nil {
		b.refuseBare(cr, req, open)
		return nil, open
	}
	a := &attempt{ticket: tk, req: cr, crawl: t.crawl(), start: time.Now(), mark: domains.StallMark(), left: left, episode: ep, header: collyx.HeaderOf(req.Header), bare: true}
	a.waited = a.start.Sub(entered)
	if cr.URL != req.URL {
		a.sentURL = req.URL.String()
	}
	b.attempts.store(cr, a)
	if !isRobots(req) {
		b.unfinished.left(cr)
	}
	return a, nil
}

// admit waits for d's pace (d pinned), at most half of the client's
// Timeout left (a patient request to a healthy d waits on; patientRequest
// moves its deadline), then asks d's circuit. On waitErr or open, d is let
// go.
func (t *transport) admit(req *http.Request, d *domains.Domain, patient bool) (tk domains.Ticket, left int64, ep uint64, waitErr error, open *circuit.OpenError) {
	b := t.b
	ctx := req.Context()
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(dl)/2))
		defer cancel()
	}
	var slotCtx context.Context
	if patient {
		var cancel context.CancelFunc
		slotCtx, cancel = context.WithCancel(t.crawl())
		defer cancel()
		stop := context.AfterFunc(ctx, func() {
			if !d.Healthy() {
				cancel()
			}
		})
		defer stop()
	}
	// Colly's LimitRule slot, if any, is the first request's host's.
	lend := func() func() { s, _ := lendSlot(t.c, firstOf(req).URL.Host); return s.retake() }
	adm, waitErr, allowErr := b.set.Admit(ctx, d, func() (uint64, int, error) { return d.Pace.AcquireAtTransport(ctx, slotCtx, lend) })
	if allowErr != nil {
		open = &circuit.OpenError{Key: d.Name, State: circuit.Open, RetryAt: b.clock.Now()}
		if e, ok := allowErr.(*circuit.OpenError); ok {
			open = e
		}
	}
	return adm.Ticket, adm.Left, adm.Episode, waitErr, open
}

// hopLag is how much later than req's own deadline the previous hop of
// its redirect chain was to end (patientRequest moved it on), 0 for a
// chain's first request or a hop given no more time than its chain.
func hopLag(req *http.Request) time.Duration {
	if req.Response == nil || req.Response.Request == nil {
		return 0
	}
	prev, ok := req.Response.Request.Context().Deadline()
	own, ownOK := req.Context().Deadline()
	if !ok || !ownOK {
		return 0
	}
	return max(0, prev.Sub(own))
}

// patientRequest is req with its client's deadline moved on by waited, the
// breaker's wait, not the site's; it still ends with the crawl. Call stop
// once the answer is read.
func patientRequest(req *http.Request, waited time.Duration, crawl context.Context) (*http.Request, func()) {
	parent := context.WithoutCancel(req.Context())
	var ctx context.Context
	var cancel context.CancelFunc
	if dl, ok := req.Context().Deadline(); ok {
		ctx, cancel = context.WithDeadline(parent, dl.Add(waited))
	} else {
		ctx, cancel = context.WithCancel(parent)
	}
	stop := context.AfterFunc(crawl, cancel)
	req = req.WithContext(ctx)
	req.Cancel = nil //nolint:staticcheck // net/http's Client sets it at its old deadline; the moved context decides (chaos/SEEDS.md, 2993673566452867462)
	return req, func() { stop(); cancel() }
}

// crawl is the crawl's context: its end is not the site's timeout.
func (t *transport) crawl() context.Context {
	if t.c == nil {
		return context.Background()
	}
	return crawlContext(t.c)
}

// heldPast ends a request whose wait for its domain's pace outlasted its
// context: cancelled at the crawl's end, else refused until the pace
// allows (nothing was sent: no failure of the site).
func (b *Breaker) heldPast(crawl context.Context, cr *colly.Request, req *http.Request, d *domains.Domain, err error) error {
	if crawl.Err() != nil {
		if !isRobots(req) {
			// No checkpoint callback saw it: OnNotVisited keeps it.
			b.cancelled(cr, d.Name, crawl)
			for _, f := range b.onNotVisited {
				f(cr, err)
			}
		}
		return err
	}
	open := &circuit.OpenError{Key: d.Name, State: circuit.Closed, RetryAt: d.Pace.Earliest()}
	b.refuseBare(cr, req, open)
	return open
}

// refuseBare refuses a bare request, robots.txt silently.
func (b *Breaker) refuseBare(cr *colly.Request, req *http.Request, open *circuit.OpenError) {
	if isRobots(req) {
		return
	}
	b.refuse(cr, open)
}

// hop carries a redirect's next request for a. A hop to another host
// closes a's attempt as a success and gates the hop against the target.
func (t *transport) hop(req *http.Request, a *attempt) error {
	b := t.b
	d := a.ticket.Domain()
	host := hostOf(req.URL.Host)
	a.latency = 0 // the next hop's body is the one that counts
	if d == nil || host == d.Name || a.settled || a.refused != nil || a.over {
		return nil
	}
	// The redirecting host answered: a success for it, settled as any
	// answer is (its pace recovers from a throttle on redirects too).
	a.measure()
	b.set.Settle(a.ticket, domains.Outcome{Result: circuit.Result{Class: circuit.Success, Latency: a.latency}, Stalled: a.stalled,
		Status: req.Response.StatusCode, Episode: a.episode, Left: a.left})
	a.latency = 0 // the next hop's body is the one that counts
	b.releaseSlot(a)
	a.ticket = domains.Ticket{}

	d2, open, _ := b.pin(host)
	if open != nil {
		a.refused = open
		b.refuse(a.req, open)
		return open
	}
	tk, left, ep, waitErr, open := t.admit(req, d2, false)
	if waitErr != nil {
		a.over = true
		if b.holdHop(t.crawl(), a, req) {
			return &circuit.OpenError{Key: d2.Name, State: circuit.Closed, RetryAt: d2.Pace.Earliest()}
		}
		return b.heldPast(t.crawl(), a.req, req, d2, waitErr)
	}
	if open != nil {
		a.refused = open
		b.refuse(a.req, open)
		return open
	}
	a.ticket, a.released, a.left, a.episode, a.start, a.mark = tk, false, left, ep, time.Now(), domains.StallMark()
	return nil
}

// chained is req, a redirect's hop, with the deadline its previous hop
// was given: net/http's Client gives every hop the chain's first
// deadline, but the earlier hops' waits for room moved theirs on
// (patient). Without it the hop would fail before it left, counted as its
// target's failure (chaos/SEEDS.md, 7198215812936100601). unchain ends
// the moved context; nil when nothing moved.
func (t *transport) chained(req *http.Request) (_ *http.Request, unchain func()) {
	if lag := hopLag(req); lag > 0 {
		return patientRequest(req, lag, t.crawl())
	}
	return req, nil
}

// patient is req with its deadline moved on by waited, a's wait at the
// breaker's gate for room and for a slot of Colly's LimitRule it lent
// meanwhile (which has no deadline): the crawler's time, not the site's
// (chaos/SEEDS.md, 12560688156884848147). a.unwait ends it, and unchain
// (chained) with it, once the answer is read.
func (t *transport) patient(req *http.Request, a *attempt, waited time.Duration, unchain func()) *http.Request {
	a.unwait = unchain
	if waited > time.Millisecond {
		var unwait func()
		req, unwait = patientRequest(req, waited, t.crawl())
		a.unwait = unwait
		if unchain != nil {
			a.unwait = func() { unwait(); unchain() }
		}
	}
	return req
}

// holdHop keeps a's URL for a re-send straight to the target (resendHop)
// when its hop req waited too long for room there. Not for a bare attempt,
// after the crawl's end, or past the re-send budget.
func (b *Breaker) holdHop(crawl context.Context, a *attempt, req *http.Request) bool {
	if a.bare || crawl.Err() != nil || !b.resendBudgetLeft(req.URL.String()) {
		return false
	}
	a.resend = b.keepResend(a.req, req.URL.String(), false)
	a.heldHop = req.URL
	return true
}

// resendHop sends r again to its held hop's target (holdHop).
func (b *Breaker) resendHop(r *colly.Request, a *attempt, err error) {
	r.URL = a.heldHop
	key := r.URL.String()
	domain := hostOf(r.URL.Host)
	b.log.Info().Str("event", "hop_resent").Str("domain", domain).Str("url", key).
		Msg("breaker: a redirect's hop waited for room past half the client's timeout; the URL is sent again to its target")
	b.sendAgain(r, a, observe.Attempt{Request: r, Domain: domain, Result: circuit.Result{Class: circuit.Excluded}, Err: err}, "held back at a redirect's target")
}

// settleBare records and reports what a bare attempt came to: nothing of
// Colly's will finish it.
func (b *Breaker) settleBare(a *attempt, class circuit.Class, err error) {
	if a.settled {
		return
	}
	b.settle(a, class, err)
	b.attempts.take(a.req)
	if a.refused != nil {
		return
	}
	if a.target != nil && a.class != circuit.Success && !a.cancelled {
		b.hopOf.Store(a.target.String(), a.req.URL)
	} else if !b.hopOf.Empty() && (a.class == circuit.Success || a.class == circuit.Gone) {
		b.hopOf.Delete(a.sentURL)
	}
	if a.class == circuit.Success && a.status >= 300 && a.status < 400 && a.status != http.StatusNotModified {
		// A redirect: the client's next request (its own attempt) decides.
		return
	}
	b.gone.settled(a.req.URL.String(), a.class, a.cancelled)
	if a.target != nil {
		b.gone.settled(a.target.String(), a.class, a.cancelled)
	}
	at := observe.Attempt{Request: a.req, Domain: a.ticket.Domain().Name, Result: circuit.Result{Class: a.class, Latency: a.latency}, Status: a.status, Err: a.err, Cancelled: a.cancelled, ResendAt: a.handBack, PausedUntil: a.pausedTill}
	b.report(at)
}

// judgeBare classifies a bare attempt's 2xx answer once its body is read,
// by the breaker's validator if it has one.
func (b *Breaker) judgeBare(a *attempt, body []byte) (circuit.Class, error) {
	if b.validator == nil || a.bareHeader == nil {
		return circuit.Success, nil
	}
	h := a.bareHeader
	a.bareHeader = nil
	resp := &colly.Response{StatusCode: a.status, Body: body, Headers: &h, Request: a.req, Ctx: a.req.Ctx}
	if err := b.validator.Check(resp); err != nil {
		return circuit.Invalid, err
	}
	return circuit.Success, nil
}
