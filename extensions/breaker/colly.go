package breaker

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/internal/deadline"
	"github.com/breakwater-crawl/breakwater/internal/domains"
	"github.com/breakwater-crawl/breakwater/internal/pace"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/gocolly/colly/v2"
)

// attempt is the breaker's record of one request between the gate and its
// outcome; one goroutine runs all of a request's steps, so no lock.
type attempt struct {
	ticket     domains.Ticket
	req        *colly.Request
	crawl      context.Context  // the collector's context: its end is the crawl's, not the site's
	coll       *colly.Collector // the collector that gated it (nil: bare), whose LimitRule slot it holds
	start      time.Time        // real time: latency is a measurement, not a timer
	latency    time.Duration    // from the gate to the end of the body's read: the site's, never a delay of Colly's
	mark       int64            // the stall clock at start
	stalled    time.Duration    // of latency, how long this process was kept from running (stallSince)
	left       int64            // when it reached the gate, by the breaker's clock, in unix nanos
	episode    uint64           // the throttle episode the request left in
	status     int
	retryAfter string
	quotaWait  time.Duration      // until the reset of a quota the answer said was spent (RateLimit-Remaining: 0)
	refused    *circuit.OpenError // refused at the gate: the transport hands this to Colly
	header     headerKey          // the request's header map, how the transport finds the attempt
	body       watchedBody        // the answer's body as the transport hands it to Colly

	settled    bool // the outcome is recorded
	sent       bool // the breaker's transport handed it to the network
	reading    bool // Colly is reading the body: the pace slot stays taken
	released   bool // the pace slot is given back
	class      circuit.Class
	err        error
	cancelled  bool
	horizon    bool          // throttled past the pacing horizon
	handBack   time.Time     // throttled, its re-send due beyond the resend horizon: handed back
	pausedTill time.Time     // throttled: the end of the pause it started
	resend     *resendToken  // set when the breaker will send a throttled URL again
	cacheDir   string        // the collector's CacheDir when the request left: Colly caches what comes back
	cacheKey   string        // the URL Colly's cache files the answer under, when cacheDir is set
	bare       bool          // gated by the transport: no callback of the breaker's saw it
	bareHeader http.Header   // a bare attempt's 2xx answer headers, for its validation
	over       bool          // ended at a redirect's hop (cancelled): its outcome is accounted for
	waited     time.Duration // a bare attempt's wait for room at the transport, not counted in its client's timeout
	unwait     func()        // ends the context patientRequest gave it
	heldHop    *url.URL      // its redirect's hop waited for room past half the client's timeout: sent again to this URL
	target     *url.URL      // a bare attempt's redirect hop that answered: the URL it ended at
	sentURL    string        // a bare attempt's own URL, when it is recorded under another
	proxyFault bool          // no proxy of Config.Proxies carried it: not the site's outcome
	telling    int           // its 401/403s through other proxies, left to tell whose they were
	cached     bool          // Colly's CacheDir answered: never gated, sent or counted in the circuit
}

// Register wires the breaker into c (a colly.CollectorOption). The circuit
// decides in OnRequestHeaders, right before the request leaves; a refusal
// reaches OnError and the OnRefused hooks as an error matching ErrOpen,
// after the program's OnRequest callbacks, as in Colly. A request to a
// domain known open is refused in OnRequest, before any LimitRule slot,
// unless a callback of the program's follows the breaker's there; it then
// goes on through them and is refused at the gate. Register wraps the
// collector's transport (adaptive timeouts), so set proxies and
// transports before it, and register after your own OnRequest callbacks
// that Abort. A Clone() copies no callbacks: wire each clone
// with breakwater.Use(clone, v, b, cp), as its collector; left out, it is
// still gated at the shared transport, but its 429s are not re-sent and
// the checkpoint cannot resume its unfinished URLs (the run ends in
// error until it is registered). docs/colly-features.md covers each
// Colly feature.
func (b *Breaker) Register(c *colly.Collector) {
	rt := b.wrapTransport(c)
	async := c.Async
	at := collyx.RequestCallbackCount(c) // the breaker's place among c's OnRequest callbacks
	c.OnRequest(collyx.Own(func(r *colly.Request) { b.onRequest(c, at, r) }))
	c.OnRequestHeaders(func(r *colly.Request) { b.gate(c, rt, r) })
	c.OnResponseHeaders(b.onResponseHeaders)
	c.OnResponse(func(r *colly.Response) {
		a := b.attempts.load(r.Request)
		if a == nil || a.refused != nil || a.cached {
			return
		}
		// Timed by the transport, unless it was replaced after Register.
		a.measure()
		if !async {
			// A synchronous collector visits links from its callbacks.
			b.releaseSlot(a)
		}
	})
	c.OnScraped(func(r *colly.Response) { b.finish(c, r, nil) })
	c.OnError(func(r *colly.Response, err error) { b.finish(c, r, err) })
}

// onRequest refuses a request to a domain known to be open, drops a copy
// of a URL being re-sent, and waits for the domain's pace before Colly's
// LimitRule, so a waiting domain holds none of its shared slots. at is
// the breaker's place among c's OnRequest callbacks: a request is stopped
// here only when none of the program's follows (early); otherwise the
// gate stops it, after them, as Colly would report an error.
func (b *Breaker) onRequest(c *colly.Collector, at int, r *colly.Request) {
	if r.IsAbort() {
		return
	}
	if !b.resend.Empty() {
		if tok, ok := b.resend.Load(r.URL.String()); ok && tok.(*resendToken).of(r) && !tok.(*resendToken).taken.CompareAndSwap(false, true) {
			r.Abort()
			b.log.Debug().Str("event", "duplicate_resend").Str("url", r.URL.String()).
				Msg("breaker: the URL is already being sent again after its Retry-After; this copy is dropped")
			return
		}
	}
	if paused := b.proxiesPaused(r); paused != nil {
		if early(c, at) {
			b.refuseEarly(c, r, paused)
		}
		return
	}
	d, err := b.set.Pin(hostOf(r.URL.Host))
	if err != nil {
		return // the gate reports it
	}
	if open := b.set.KnownOpen(d); open != nil {
		d.Unpin()
		if early(c, at) {
			d.Refused.Add(1)
			b.refuseEarly(c, r, open)
		}
		return
	}
	defer d.Unpin() // a reservation, once made, keeps the domain whole
	ctx := crawlContext(c)
	if ctx.Err() != nil {
		if early(c, at) {
			b.cancelled(r, d.Name, ctx)
			collyx.ReportError(c, r, ctx.Err())
		}
		return
	}
	if err := d.Pace.Reserve(ctx, r); err != nil {
		if early(c, at) {
			b.cancelled(r, d.Name, ctx)
			collyx.ReportError(c, r, err)
		}
		return
	}
	// The circuit may have opened, or the proxies paused, while it waited.
	if open := b.set.KnownOpen(d); open != nil {
		d.Pace.Unreserve(r)
		if early(c, at) {
			d.Refused.Add(1)
			b.refuseEarly(c, r, open)
		}
	} else if paused := b.proxiesPaused(r); paused != nil {
		d.Pace.Unreserve(r)
		if early(c, at) {
			b.refuseEarly(c, r, paused)
		}
	}
}

// early reports whether the breaker's OnRequest callback, at place at
// among c's, may stop a request it refuses and run its OnError callbacks
// at once: only Breakwater's callbacks follow it (collyx.OnlyOwnAfter).
// Otherwise the request goes on through the program's and the gate
// refuses it (counted and listed the same), for Colly to report.
func early(c *colly.Collector, at int) bool { return collyx.OnlyOwnAfter(c, at) }

// pin pins host's domain unless the store fails (err, and a refusal) or
// its circuit is known open (a refusal, counted).
func (b *Breaker) pin(host string) (d *domains.Domain, open *circuit.OpenError, err error) {
	if d, err = b.set.Pin(host); err != nil {
		return nil, &circuit.OpenError{Key: host, State: circuit.Open, RetryAt: b.clock.Now()}, err
	}
	if open = b.set.KnownOpen(d); open != nil {
		d.Refused.Add(1)
		d.Unpin()
		return nil, open, nil
	}
	return d, nil, nil
}

// refuseEarly refuses r in OnRequest and runs the collector's OnError
// callbacks itself: Colly reports nothing for an aborted request.
func (b *Breaker) refuseEarly(c *colly.Collector, r *colly.Request, open *circuit.OpenError) {
	r.Abort()
	b.refuse(r, open)
	if !collyx.ReportError(c, r, open) {
		b.layoutWarn.Do(func() {
			b.log.Warn().Str("event", "colly_layout_unknown").
				Msg("breaker: this Colly version keeps its OnError callbacks where the breaker cannot find them; requests refused in OnRequest reach only the OnRefused hooks")
		})
	}
}

func crawlContext(c *colly.Collector) context.Context { return cmp.Or(c.Context, context.Background()) }

// gate waits for the pace, then asks the circuit: the last moment before
// the request leaves.
func (b *Breaker) gate(c *colly.Collector, rt *transport, r *colly.Request) {
	if r.IsAbort() {
		b.unreserve(r)
		return
	}
	if paused := b.proxiesPaused(r); paused != nil {
		b.unreserve(r)
		b.stopAtGate(c, rt, r, paused)
		return
	}
	ctx := crawlContext(c)
	host := hostOf(r.URL.Host)
	d, open, err := b.pin(host)
	if open != nil {
		if err != nil {
			b.log.Error().Str("event", "breaker_store_error").Str("url", r.URL.String()).Err(err).Msg("breaker: no circuit for the domain; request refused")
		}
		b.unreserve(r)
		b.stopAtGate(c, rt, r, open)
		return
	}
	// d is pinned: the ticket takes the pin over, or it is let go here.
	if ctx.Err() != nil {
		d.Pace.Unreserve(r)
		d.Unpin()
		b.cancelled(r, d.Name, ctx)
		return
	}
	adm, waitErr, allowErr := b.set.Admit(ctx, d, func() (uint64, int, error) {
		return d.Pace.AcquireLending(ctx, r, func() func() { s, _ := lendSlot(c, r.URL.Host); return s.retake() })
	})
	if waitErr != nil {
		b.cancelled(r, d.Name, ctx)
		return
	}
	if allowErr != nil {
		open := &circuit.OpenError{Key: d.Name, State: circuit.Open, RetryAt: b.clock.Now()}
		// A store failing closed refuses with ErrOpen, logged by the store.
		if !errors.As(allowErr, &open) && !errors.Is(allowErr, ErrOpen) {
			b.log.Error().Str("event", "breaker_store_error").Str("domain", d.Name).Err(allowErr).Msg("breaker: the circuit could not decide; request refused")
		}
		b.stopAtGate(c, rt, r, open)
		return
	}
	a := &attempt{ticket: adm.Ticket, req: r, crawl: ctx, coll: c, start: time.Now(), mark: domains.StallMark(), left: adm.Left, episode: adm.Episode, header: collyx.RequestHeader(r), cacheDir: c.CacheDir}
	if a.cacheDir != "" {
		a.cacheKey = r.URL.String() // before a redirect moves r.URL
	}
	b.attempts.store(r, a)
	// Off the unfinished list as it leaves, not at its outcome: a late
	// outcome of an earlier attempt would erase a later mark.
	b.unfinished.left(r)
}

// lendSlot frees the slot of c's LimitRule that a request to host holds
// while it waits (at the gate, at the transport, or on a slow site), so
// that other domains' requests may use it, and returns the rule's slots
// to take one again from (nil: nothing was lent) and its Parallelism.
// Colly took the slot before OnRequestHeaders and gives it back once the
// answer is read: the request must hold one again by then.
func lendSlot(c *colly.Collector, host string) (lent lentSlot, parallelism int) {
	slots := collyx.LimitSlots(c, host)
	if slots == nil {
		return nil, 0
	}
	select {
	case <-slots:
		return slots, cap(slots)
	default:
		return nil, 0
	}
}

// lentSlot is the slots of the LimitRule a request lent its own to.
type lentSlot chan bool

// take takes a slot again, waiting for a free one.
func (s lentSlot) take() { s <- true }

// retake returns take; nil when nothing was lent.
func (s lentSlot) retake() func() {
	if s == nil {
		return nil
	}
	return s.take
}

// tryTake takes a slot again if one is free now.
func (s lentSlot) tryTake() bool {
	select {
	case s <- true:
		return true
	default:
		return false
	}
}

// stopAtGate refuses r: the breaker's transport fails it with err, or,
// replaced after Register, r is aborted.
func (b *Breaker) stopAtGate(c *colly.Collector, rt *transport, r *colly.Request, err *circuit.OpenError) {
	a := &attempt{refused: err, header: collyx.RequestHeader(r)}
	b.attempts.store(r, a)
	if !b.installed(c, rt) {
		r.Abort()
	}
	b.refuse(r, err)
}

// cancelled stops r at the crawl's end and lists it unfinished.
func (b *Breaker) cancelled(r *colly.Request, domain string, ctx context.Context) {
	r.Abort()
	b.dropResend(r)
	if b.gone.Has(r.URL.String()) {
		return // a retry of a URL that answered 404 or 410: nothing left to do
	}
	b.unfinished.mark(Unfinished{URL: r.URL.String(), Domain: domain, Reason: "cancelled: " + cancelReason(ctx)})
}

func cancelReason(ctx context.Context) string {
	if err := context.Cause(ctx); err != nil {
		return "the crawl's context ended before the URL was done (" + err.Error() + ")"
	}
	return "the crawl's context ended before the URL was done"
}

func (b *Breaker) refuse(r *colly.Request, err *circuit.OpenError) {
	b.dropResend(r)
	if !b.gone.Has(r.URL.String()) { // else a retry of a URL that answered 404 or 410
		b.unfinished.mark(Unfinished{URL: r.URL.String(), Domain: err.Key, Reason: err.Error(), RetryAt: err.RetryAt})
	}
	b.log.Debug().Str("event", "refused").Str("domain", err.Key).Str("url", r.URL.String()).
		Time("retry_at", err.RetryAt).Msg("breaker: request refused without touching the network")
	for _, f := range b.onRefused {
		f(r, err)
	}
}

// onResponseHeaders records at once an answer whose status decides its
// class (not a 2xx), before the LimitRule slot frees.
func (b *Breaker) onResponseHeaders(r *colly.Response) {
	a := b.attempts.load(r.Request)
	if a == nil {
		// Never gated: Colly's cache answered. Free its reserved room;
		// finish settles the URL by the cached answer.
		b.unreserve(r.Request)
		b.attempts.store(r.Request, &attempt{req: r.Request, cached: true, status: r.StatusCode})
		b.unfinished.left(r.Request) // answered: an earlier reason no longer stands
		return
	}
	if a.cached {
		return
	}
	if a.refused != nil {
		return
	}
	a.status, a.retryAfter = r.StatusCode, retryAfterIn(r.Headers)
	class := b.throttleClass(Classify(r.StatusCode, nil), a.status, a.retryAfter)
	if r.Headers != nil {
		if spent := b.set.Quota(a.ticket, *r.Headers, class == circuit.Throttled); spent > 0 {
			a.quotaWait = spent
		}
	}
	if class == circuit.Success {
		return // the body and the validator decide
	}
	b.settle(a, class, nil)
}

// throttleClass turns a 503 with a Retry-After into Throttled.
func (b *Breaker) throttleClass(class circuit.Class, status int, retryAfter string) circuit.Class {
	if status == 503 {
		if _, ok := pace.ParseRetryAfter(retryAfter, b.clock.Now()); ok {
			return circuit.Throttled
		}
	}
	return class
}

// settle records a's outcome once (counters, circuit, pace, unfinished
// list), then frees the pace slot, so no waiting request passes a circuit
// this outcome trips.
func (b *Breaker) settle(a *attempt, class circuit.Class, err error) {
	if a.settled {
		return
	}
	r := a.req
	a.settled = true
	d := a.ticket.Domain()
	cut := cutByCrawl(err, a.crawl)
	if cut {
		class, a.cancelled = circuit.Excluded, true
	}
	if class == circuit.Success {
		err = nil
	} else if a.proxyFault {
		class = circuit.Excluded
	}
	a.class, a.err = class, err
	if class == circuit.Degraded && isDNSError(err) {
		b.log.Warn().Str("event", "dns_failure").Str("domain", d.Name).Err(err).
			Msg("breaker: DNS failure counted against the domain; check the local resolver too")
	}
	o := domains.Outcome{Status: a.status, Episode: a.episode, Left: a.left, Telling: a.telling, Unanswered: cut && a.sent,
		RetryAfter: a.retryAfter, QuotaWait: a.quotaWait}
	a.measure()
	o.Result, o.Stalled = circuit.Result{Class: class, Latency: a.latency}, a.stalled
	settled := b.set.Settle(a.ticket, o)
	a.pausedTill, a.horizon = settled.PausedTill, settled.Horizon
	if class == circuit.Throttled && !a.horizon && b.resendBudgetLeft(r.URL.String()) {
		// Sent again after its pause: handed back to the queue if that is
		// beyond the resend horizon, else by the breaker, past Colly's
		// cache, which just stored the 429.
		if a.bare {
			a.handBack = a.pausedTill
			if e := d.Pace.Earliest(); e.After(a.handBack) {
				a.handBack = e
			}
		} else if due, ok := b.set.HandBack(d, b.clock.Now()); ok {
			a.handBack = due // its count stays: the budget spans the hand-backs
		} else {
			a.resend = b.keepResend(r, r.URL.String(), a.cacheDir != "")
		}
	}
	b.listUnfinished(a, d, class)
	if !a.reading {
		b.releaseSlot(a)
	}
}

// measure fixes a's latency once, with the part of it this process was
// kept from running, which is no evidence of the site's.
func (a *attempt) measure() {
	if a.latency == 0 {
		a.latency, a.stalled = time.Since(a.start), domains.StallSince(a.mark)
	}
}

// bodyCut records an answer whose body was cut short as Degraded, in place
// of a class its headers recorded (a 404, a 403, a 429).
func (b *Breaker) bodyCut(a *attempt, err error) {
	if !a.settled {
		b.settle(a, classifyError(err), err)
		return
	}
	if a.class.Failure() || a.class == circuit.Excluded || classifyError(err) != circuit.Degraded {
		return
	}
	if cutByCrawl(err, a.crawl) {
		return // the crawl's own end cut it
	}
	was := a.class
	a.class, a.err = circuit.Degraded, err
	b.set.Reclassify(a.ticket, was, circuit.Result{Class: circuit.Degraded, Latency: a.latency})
	b.listUnfinished(a, a.ticket.Domain(), circuit.Degraded)
}

// listUnfinished lists a's URL unless it was collected or will be re-sent.
func (b *Breaker) listUnfinished(a *attempt, d *domains.Domain, class circuit.Class) {
	if a.bare && a.req.URL.Path == "/robots.txt" {
		return // the Visit that needed it says what is left
	}
	var why string
	switch {
	case a.cancelled:
		if b.gone.Has(a.req.URL.String()) {
			return // a retry of a URL that answered 404 or 410
		}
		why = "cancelled: " + cancelReason(a.crawl)
	case class.Failure() || class == circuit.Blocked || class == circuit.ClientError:
		why = "failed: " + describe(class, a.status, a.err)
	case a.proxyFault:
		why = "failed through the proxies: " + describe(class, a.status, a.err)
	case class == circuit.Throttled && a.horizon:
		why = "throttled without a success for longer than the pacing horizon"
	case class == circuit.Throttled && !a.handBack.IsZero():
		b.unfinished.mark(Unfinished{URL: a.req.URL.String(), Domain: d.Name, RetryAt: a.handBack,
			Reason: "throttled (" + strconv.Itoa(a.status) + "): handed back, not to be sent before the domain's pause and pace allow"})
		return
	case class == circuit.Throttled && a.resend == nil:
		why = "throttled (429) past the throttle-retry budget"
	default:
		return
	}
	b.unfinished.mark(Unfinished{URL: a.req.URL.String(), Domain: d.Name, Reason: why})
}

func (b *Breaker) releaseSlot(a *attempt) {
	if !a.released && a.ticket.Domain() != nil {
		a.released = true
		a.ticket.Domain().Pace.Release()
	}
}

// cutByCrawl reports whether err is the end of the crawl's context: that
// context is done, and err is a context's end or the cause it was
// cancelled with (context.WithCancelCause), which net/http returns in
// place of context.Canceled.
func cutByCrawl(err error, crawl context.Context) bool {
	if err == nil || crawl == nil || crawl.Err() == nil {
		return false
	}
	if isCancellation(err) {
		return true
	}
	cause := context.Cause(crawl)
	return cause != nil && errors.Is(err, cause)
}

// isCancellation reports whether err is a context's end, not the adaptive
// timeout.
func isCancellation(err error) bool {
	if err == nil {
		return false // no errors.As on success: its target escapes
	}
	var te *deadline.TimeoutError
	if errors.As(err, &te) {
		return false
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// finish classifies what came back, records it if the headers did not,
// and reports it; of OnError and OnScraped, the first wins.
func (b *Breaker) finish(c *colly.Collector, r *colly.Response, err error) {
	a := b.attempts.take(r.Request)
	if a == nil {
		b.unclaimed(c, r)
		return
	}
	if a.cached {
		b.finishCached(c, r, a, err)
		return
	}
	if a.heldHop != nil {
		b.resendHop(r.Request, a, err)
		return
	}
	if a.refused != nil || a.over {
		return // already reported to OnRefused, or listed cancelled
	}
	d := a.ticket.Domain()
	status := cmp.Or(r.StatusCode, a.status) // a.status: its headers' (settled then, unless 2xx)
	if !a.settled {
		class := Classify(status, err)
		if r.StatusCode == 0 && a.status != 0 && err != nil {
			class = classifyError(err) // the headers arrived, the body did not
		}
		if class == circuit.Success && b.validator != nil && r.Request.Method != http.MethodHead {
			// A HEAD has no body to judge.
			if verr := b.validator.Check(r); verr != nil {
				class, err = circuit.Invalid, verr
			}
		}
		b.settle(a, b.throttleClass(class, status, retryAfterOf(r, a)), err)
	}
	b.releaseSlot(a)
	class, latency := a.class, a.latency
	at := observe.Attempt{Request: r.Request, Domain: d.Name, Result: circuit.Result{Class: class, Latency: latency}, Status: status, Err: a.err, Cancelled: a.cancelled, PausedUntil: a.pausedTill}
	// The URL as the sets' key, made only when one of them is asked: a
	// success asks none until a URL was gone, throttled or re-sent, and
	// most pages are that (an empty set changes for no settle).
	var key string
	if class != circuit.Success || !b.gone.Untouched() {
		key = r.Request.URL.String()
		b.gone.settled(key, class, a.cancelled)
	}
	if class == circuit.Throttled && a.cacheDir != "" {
		b.forgetCached(a.cacheDir, a.cacheKey)
	}
	if class != circuit.Throttled {
		if key == "" && (!b.throttle.Empty() || !b.resend.Empty()) {
			key = r.Request.URL.String()
		}
		if !b.throttle.Empty() {
			b.throttle.Delete(key)
		}
		if !b.resend.Empty() {
			b.resendOver(r.Request, key, class == circuit.Success)
		}
		b.report(at)
		return
	}
	if !a.handBack.IsZero() || a.horizon || a.resend == nil {
		// Handed back, or given up: a later request for the URL is new
		// work, not a copy; its re-send budget stays spent until it is
		// answered otherwise.
		b.dropResend(r.Request)
		if at.GaveUp = a.handBack.IsZero(); !at.GaveUp {
			b.log.Info().Str("event", "handed_back").Str("domain", d.Name).Str("url", key).Time("resend_at", a.handBack).
				Msg("breaker: throttled URL handed back to the queue: its re-send is due beyond the resend horizon")
			at.ResendAt = a.handBack
		}
		b.report(at)
		return
	}
	b.sendAgain(r.Request, a, at, "throttled (429)")
}

// resendToken marks a throttled URL the breaker will send again: the first
// copy of the throttled request takes it, every other copy (a user's
// retry) is dropped. A copy shares the throttled request's header map or
// the re-send's (Colly's Retry passes it on), so a revisit is no copy.
type resendToken struct {
	taken      atomic.Bool
	headers    http.Header  // the re-send's headers, copied when the URL was throttled
	orig, copy headerKey    // the throttled request's header map, the re-send's (headers)
	prev       *resendToken // the token of the re-send that was throttled again, if this is one
}

// sendAgain reports at as retrying and sends r again, unless a user's
// retry took the token; a re-send Colly refuses is reported given up.
func (b *Breaker) sendAgain(r *colly.Request, a *attempt, at observe.Attempt, why string) {
	at.Retrying = true
	b.report(at)
	if a.resend.taken.Load() {
		return
	}
	key := r.URL.String()
	if rerr := b.sendResend(r, key, a.resend); rerr != nil {
		b.throttle.Delete(key)
		at.Retrying, at.GaveUp, at.Err = false, true, rerr
		b.unfinished.mark(Unfinished{URL: key, Domain: at.Domain, Reason: why + "; the re-send could not be issued: " + rerr.Error()})
		b.report(at)
	}
}

// keepResend files and returns a re-send token for r under key, copying
// r's headers now, before a user's Retry hands the map on. noCache skips
// Colly's cache.
func (b *Breaker) keepResend(r *colly.Request, key string, noCache bool) *resendToken {
	tok := &resendToken{orig: collyx.RequestHeader(r), headers: headerCopy(r, noCache)}
	tok.copy = collyx.HeaderOf(tok.headers)
	if prev, ok := b.resend.Load(key); ok && prev.(*resendToken).of(r) {
		// Throttled again: a copy of any request of the chain is one.
		tok.prev = prev.(*resendToken)
	}
	b.resend.Store(key, tok)
	return tok
}

// sendResend sends r again as tok's re-send. It returns an error only when
// the re-send was not issued and no copy took the token meanwhile; the
// token is then withdrawn, so the user's retries are free again.
func (b *Breaker) sendResend(r *colly.Request, key string, tok *resendToken) error {
	err := retryWith(r, tok.headers)
	if err == nil || tok.taken.Load() {
		return nil
	}
	b.resend.Delete(key)
	return err
}

// of reports whether r is a copy of any request of t's chain.
func (t *resendToken) of(r *colly.Request) bool {
	h := collyx.RequestHeader(r)
	if h == (headerKey{}) {
		return false
	}
	for ; t != nil; t = t.prev {
		if h == t.orig || h == t.copy {
			return true
		}
	}
	return false
}

// dropResend frees r's URL for later copies if r holds its re-send token.
func (b *Breaker) dropResend(r *colly.Request) {
	if b.resend.Empty() {
		return
	}
	key := r.URL.String()
	if tok, ok := b.resend.Load(key); ok && tok.(*resendToken).of(r) {
		b.resend.Delete(key)
	}
}

// resendOver ends key's re-send: a success keeps the token (later copies
// are dropped), anything else frees the URL for the user's retries.
func (b *Breaker) resendOver(r *colly.Request, key string, success bool) {
	v, ok := b.resend.Load(key)
	if !ok || !v.(*resendToken).of(r) || !v.(*resendToken).taken.Load() {
		return
	}
	if !success {
		b.resend.Delete(key)
	}
}

// describe says what an attempt came to, for the unfinished list.
func describe(c circuit.Class, status int, err error) string {
	switch {
	case status != 0 && err != nil:
		return fmt.Sprintf("%s (HTTP %d: %v)", c, status, err)
	case status != 0:
		return fmt.Sprintf("%s (HTTP %d)", c, status)
	case err != nil:
		return fmt.Sprintf("%s (%v)", c, err)
	}
	return c.String()
}

// resendBudgetLeft counts one more re-send of key and says whether it is
// within the budget.
func (b *Breaker) resendBudgetLeft(key string) bool {
	n := b.throttle.LoadOrStore(key, new(atomic.Int32))
	return n.(*atomic.Int32).Add(1) <= int32(b.throttleRetries)
}

func retryAfterOf(r *colly.Response, a *attempt) string {
	return cmp.Or(retryAfterIn(r.Headers), a.retryAfter)
}

func retryAfterIn(h *http.Header) string {
	if h == nil {
		return ""
	}
	return h.Get("Retry-After")
}

// headerCopy copies r's headers for a re-send; noCache skips Colly's cache.
func headerCopy(r *colly.Request, noCache bool) http.Header {
	h := http.Header{}
	if r.Headers != nil {
		h = r.Headers.Clone()
	}
	if noCache {
		h.Set("Cache-Control", "no-cache")
	}
	return h
}

func (b *Breaker) report(a observe.Attempt) {
	for _, f := range b.onOutcome {
		f(a)
	}
}

// retryWith sends r again with h, a copy of its headers (see keepResend),
// and a body reader of its own: Colly's Retry hands the copy r's reader,
// which the user's own Retry of r would then seek while the re-send's
// goroutine reads it.
func retryWith(r *colly.Request, h http.Header) error {
	origH, origB := r.Headers, r.Body
	defer func() { r.Headers, r.Body = origH, origB }()
	r.Headers = &h
	if body, ok, err := collyx.ReadBody(r.Body); err != nil {
		return err
	} else if ok && r.Body != nil {
		r.Body = bytes.NewReader(body)
	}
	return r.Retry()
}

// unreserve gives back the room reserved for r in OnRequest, if any.
func (b *Breaker) unreserve(r *colly.Request) {
	if r != nil && r.URL != nil {
		if d := b.set.Lookup(hostOf(r.URL.Host)); d != nil {
			d.Pace.Unreserve(r)
		}
	}
}

// unclaimed finishes a response to a request that never reached the gate
// (cached, or aborted): its room is given back, and a cached 429 is
// forgotten and the URL sent again past the cache.
func (b *Breaker) unclaimed(c *colly.Collector, r *colly.Response) {
	if r == nil || r.Request == nil || r.Request.URL == nil {
		return
	}
	b.unreserve(r.Request)
	if c.CacheDir == "" || r.StatusCode == 0 || r.Request.Method != http.MethodGet {
		return
	}
	if b.throttleClass(Classify(r.StatusCode, nil), r.StatusCode, retryAfterIn(r.Headers)) != circuit.Throttled {
		return
	}
	key := r.Request.URL.String()
	b.forgetCached(c.CacheDir, key)
	// With a re-send token, as after a 429 from the site: the user's retry
	// of this cached answer is a copy, dropped, not a second fetch.
	tok := b.keepResend(r.Request, key, true)
	b.log.Info().Str("event", "cached_throttle").Str("url", key).
		Msg("breaker: Colly's cache answered with a stored 429; forgotten, and the URL sent again past the cache")
	if err := b.sendResend(r.Request, key, tok); err != nil {
		b.unfinished.mark(Unfinished{URL: key, Domain: hostOf(r.Request.URL.Host),
			Reason: "throttled (a 429 from Colly's cache); sending it again past the cache failed: " + err.Error()})
	}
}

// finishCached settles an answer of Colly's cache as an answer of the
// site's, but for the circuit and the pace (nothing was sent): its class,
// after validation, goes to the OnAttempt hooks (Attempt.Cached), a
// failure lists the URL unfinished, a 404 or 410 makes it gone, and a
// success counts for the ending. A cached 429 is forgotten and sent again
// past the cache (unclaimed).
func (b *Breaker) finishCached(c *colly.Collector, r *colly.Response, a *attempt, err error) {
	status := cmp.Or(r.StatusCode, a.status)
	class := Classify(status, err)
	if b.throttleClass(class, status, retryAfterIn(r.Headers)) == circuit.Throttled {
		b.unclaimed(c, r)
		return
	}
	if class == circuit.Success && b.validator != nil && r.Request.Method != http.MethodHead {
		if verr := b.validator.Check(r); verr != nil {
			class, err = circuit.Invalid, verr
		}
	}
	if class == circuit.Success {
		err = nil
		b.cachedOK.Add(1)
	}
	key := r.Request.URL.String()
	domain := hostOf(r.Request.URL.Host)
	b.gone.settled(key, class, false)
	if class != circuit.Success && class != circuit.Gone && class != circuit.Excluded {
		b.unfinished.mark(Unfinished{URL: key, Domain: domain, Reason: "failed: " + describe(class, status, err) + " (from Colly's cache)"})
	}
	if !b.throttle.Empty() {
		b.throttle.Delete(key)
	}
	if !b.resend.Empty() {
		b.resendOver(r.Request, key, class == circuit.Success)
	}
	b.report(observe.Attempt{Request: r.Request, Domain: domain, Result: circuit.Result{Class: class}, Status: status, Err: err, Cached: true})
}

// forgetCached removes Colly's cached throttled answer for url.
func (b *Breaker) forgetCached(dir, url string) {
	if err := collyx.ForgetCached(dir, url); err != nil {
		b.log.Warn().Str("event", "cache_not_cleared").Str("url", url).Err(err).
			Msg("breaker: a throttled answer stays in Colly's CacheDir; a later GET of the URL may be answered by it")
	}
}

// attemptTable holds each request's attempt between the gate and its
// outcome (a plain map under a lock: a sync.Map's new keys cost more). The
// transport finds it by its header map, which both requests share.
type attemptTable struct {
	mu       sync.Mutex
	m        map[*colly.Request]*attempt
	byHeader map[headerKey]*attempt
}

func (t *attemptTable) store(r *colly.Request, a *attempt) {
	t.mu.Lock()
	if t.m == nil {
		t.m = make(map[*colly.Request]*attempt)
		t.byHeader = make(map[headerKey]*attempt)
	}
	t.m[r] = a
	if a.header != (headerKey{}) {
		t.byHeader[a.header] = a
	}
	t.mu.Unlock()
}

// loadHeader returns the record of the request whose header map is h.
func (t *attemptTable) loadHeader(h headerKey) *attempt {
	if h == (headerKey{}) {
		return nil
	}
	t.mu.Lock()
	a := t.byHeader[h]
	t.mu.Unlock()
	return a
}

func (t *attemptTable) load(r *colly.Request) *attempt {
	t.mu.Lock()
	a := t.m[r]
	t.mu.Unlock()
	return a
}

// take removes r's record and returns it, nil if it has none.
func (t *attemptTable) take(r *colly.Request) *attempt {
	t.mu.Lock()
	a, ok := t.m[r]
	if ok {
		delete(t.m, r)
		if a.header != (headerKey{}) && t.byHeader[a.header] == a {
			delete(t.byHeader, a.header)
		}
	}
	t.mu.Unlock()
	return a
}
