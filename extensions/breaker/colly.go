package breaker

// This file is the Colly wiring; the logic lives in circuit.go and
// breaker.go.

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

// Attempt is one request that left, with its classified outcome, as
// OnOutcome hooks see it.
type Attempt struct {
	Request *colly.Request
	Domain  string
	Outcome Outcome
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// Err is what went wrong: Colly's error, or the validator's rejection
	// for an Invalid page; nil for a Success.
	Err error
	// Retrying is set when the breaker itself sends the URL again after a
	// Retry-After pause (a 429 within the throttle-retry budget).
	Retrying bool
	// GaveUp is set when a throttled URL ran out of throttle retries, or
	// its retry could not be issued.
	GaveUp bool
}

// attempt is the breaker's record of one request between the gate and its
// outcome.
type attempt struct {
	ticket     Ticket
	start      time.Time // real time: latency is a measurement, not a timer
	status     int
	retryAfter string
	refused    bool
}

// Register wires the breaker into c. It is a colly.CollectorOption, and
// fits breakwater.Use.
//
// The decision is taken when the request actually leaves: in
// OnRequestHeaders, which Colly runs after the LimitRule slot is acquired
// and immediately before the HTTP client sends. A check in OnRequest alone
// runs before the LimitRule wait, so every queued request would be allowed
// before the first failure came back. OnRequest still refuses early, and
// cheaply, what it already knows is refused. A refused request never
// reaches the network; it is handed to the OnRefused hooks.
//
// When a profile asks for adaptive timeouts, Register also installs the
// breaker's Transport on the collector (see Transport for its caveat).
//
// Caveats: Colly's Clone copies no callbacks, so Register every clone; and
// a refused request is marked visited by Colly (it always marks before
// fetching), which is why OnRefused exists: the checkpoint parks it.
func (b *Breaker) Register(c *colly.Collector) {
	if b.adaptiveTimeouts() {
		c.WithTransport(b.Transport(b.baseTransport))
	}
	c.OnRequest(b.onRequest)
	c.OnRequestHeaders(func(r *colly.Request) { b.gate(c.Context, r) })
	c.OnResponseHeaders(b.onResponseHeaders)
	c.OnScraped(func(r *colly.Response) { b.finish(r, nil) })
	c.OnError(func(r *colly.Response, err error) { b.finish(r, err) })
}

// onRequest refuses at once a request to a domain known to be open.
func (b *Breaker) onRequest(r *colly.Request) {
	if r.IsAbort() {
		return
	}
	d, err := b.domain(HostOf(r.URL.Host))
	if err != nil {
		return // the gate reports it
	}
	if open := b.knownOpen(d); open != nil {
		d.refused.Add(1)
		r.Abort()
		b.refuse(r, open)
	}
}

// gate is the last moment before the request leaves: wait out a
// Retry-After pause, then ask the circuit.
func (b *Breaker) gate(ctx context.Context, r *colly.Request) {
	if r.IsAbort() {
		return
	}
	d, err := b.domain(HostOf(r.URL.Host))
	if err != nil {
		b.log.Error().Str("event", "breaker_store_error").Str("url", r.URL.String()).Err(err).Msg("breaker: no circuit for the domain; request refused")
		b.stopAtGate(r, &CircuitOpenError{Domain: HostOf(r.URL.Host), State: Open, RetryAt: b.clock.Now()})
		return
	}
	if open := b.knownOpen(d); open != nil {
		d.refused.Add(1)
		b.stopAtGate(r, open)
		return
	}
	if ctx == nil {
		ctx = context.Background()
	}
	d.lastSeen.Store(b.clock.Now().UnixNano())
	if err := d.pace.acquire(ctx, b.clock); err != nil {
		// Cancelled while waiting for the pace: nothing was sent; the
		// outcome is Excluded.
		r.Abort()
		return
	}
	t, err := b.allow(d)
	if err != nil {
		d.pace.release()
		open := &CircuitOpenError{Domain: d.name, State: Open, RetryAt: b.clock.Now()}
		// A shared store that cannot answer (Redis down, failing closed)
		// refuses with an error that is also ErrOpen: that is a
		// refusal, logged once by the store, not an error per request.
		if !errors.As(err, &open) && !errors.Is(err, ErrOpen) {
			b.log.Error().Str("event", "breaker_store_error").Str("domain", d.name).Err(err).Msg("breaker: the circuit could not decide; request refused")
		}
		b.stopAtGate(r, open)
		return
	}
	b.attempts.store(r, &attempt{ticket: t, start: time.Now()})
}

func (b *Breaker) stopAtGate(r *colly.Request, err *CircuitOpenError) {
	r.Abort()
	b.attempts.store(r, &attempt{refused: true})
	b.refuse(r, err)
}

func (b *Breaker) refuse(r *colly.Request, err *CircuitOpenError) {
	b.markUnfinished(Unfinished{URL: r.URL.String(), Domain: err.Domain, Reason: err.Error(), RetryAt: err.RetryAt})
	b.log.Debug().Str("event", "refused").Str("domain", err.Domain).Str("url", r.URL.String()).
		Time("retry_at", err.RetryAt).Msg("breaker: request refused without touching the network")
	for _, f := range b.onRefused {
		f(r, err)
	}
}

func (b *Breaker) onResponseHeaders(r *colly.Response) {
	if a := b.attempts.load(r.Request); a != nil {
		a.status = r.StatusCode
		if r.Headers != nil {
			a.retryAfter = r.Headers.Get("Retry-After")
		}
	}
}

// defaultThrottlePause is how long a 429 without a usable Retry-After
// pauses its domain.
const defaultThrottlePause = time.Second

// finish classifies what came back, records it and reports it. Colly calls
// OnError and then OnScraped for a parse error; the first one wins.
func (b *Breaker) finish(r *colly.Response, err error) {
	a := b.attempts.take(r.Request)
	if a == nil {
		return
	}
	if a.refused {
		return // already reported to OnRefused
	}
	d := a.ticket.d
	b.markLeft(r.Request)
	latency := time.Since(a.start)
	status := r.StatusCode
	if status == 0 {
		status = a.status
	}
	class := Classify(status, err)
	if class == Success && b.validator != nil {
		if verr := b.validator.Check(r); verr != nil {
			class, err = Invalid, verr
		}
	}
	ra := retryAfterOf(r, a)
	wait, hasWait := ParseRetryAfter(ra, b.clock.Now())
	if status == 503 && hasWait {
		// The site says when to come back: throttling, not an outage.
		class = Throttled
	}
	if class == Success {
		err = nil
	}
	if class == Degraded && IsDNSError(err) {
		b.log.Warn().Str("event", "dns_failure").Str("domain", d.name).Err(err).
			Msg("breaker: DNS failure counted against the domain; check the local resolver too")
	}
	switch class {
	case Throttled:
		if !hasWait {
			wait = defaultThrottlePause
		}
		wait = min(wait, b.maxRetryAfter)
		b.log.Info().Str("event", "paused").Str("domain", d.name).Dur("for", wait).Int("status", status).
			Msg("breaker: domain asked us to slow down; no request to it before the pause ends")
		if limit, gap, changed := d.pace.throttled(b.clock.Now(), wait); changed {
			logPace(b.log, d.name, "throttled", limit, gap)
		}
	case Success:
		if limit, gap, changed := d.pace.succeeded(); changed {
			logPace(b.log, d.name, "recovering", limit, gap)
		}
	}
	b.Record(a.ticket, Outcome{Class: class, Latency: latency})
	// The slot frees only once the outcome is recorded (freed earlier, a
	// waiting request could pass a circuit this outcome is about to trip),
	// and before any retry: in a synchronous collector Retry runs nested
	// here and needs the slot.
	d.pace.release()

	at := Attempt{Request: r.Request, Domain: d.name, Outcome: Outcome{Class: class, Latency: latency}, Status: status, Err: err}
	if class != Throttled {
		if !b.throttle.empty() {
			b.throttle.delete(r.Request.URL.String())
		}
		b.report(at)
		return
	}
	key := r.Request.URL.String()
	n := b.throttle.loadOrStore(key, new(atomic.Int32))
	if n.(*atomic.Int32).Add(1) > int32(b.throttleRetries) {
		b.throttle.delete(key)
		at.GaveUp = true
		b.markUnfinished(Unfinished{URL: key, Domain: d.name, Reason: "throttled (429) past the throttle-retry budget"})
		b.report(at)
		return
	}
	at.Retrying = true
	b.report(at)
	if rerr := r.Request.Retry(); rerr != nil {
		b.throttle.delete(key)
		at.Retrying, at.GaveUp, at.Err = false, true, rerr
		b.markUnfinished(Unfinished{URL: key, Domain: d.name, Reason: "throttled (429); the retry could not be issued: " + rerr.Error()})
		b.report(at)
	}
}

func retryAfterOf(r *colly.Response, a *attempt) string {
	if r.Headers != nil {
		if v := r.Headers.Get("Retry-After"); v != "" {
			return v
		}
	}
	return a.retryAfter
}

func (b *Breaker) report(a Attempt) {
	for _, f := range b.onOutcome {
		f(a)
	}
}
