package checkpoint

// This file is the Colly wiring; the state machine is lifecycle.go.

import (
	"fmt"
	"net/url"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/internal/visitclaim"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
)

// Register wires the checkpoint into c. It is a colly.CollectorOption, and
// fits breakwater.Use (pass the checkpoint after the breaker).
//
// It makes the checkpoint c's storage (c.SetStorage: the visited set and
// the cookies; Colly then installs a cookie jar over it, which undoes an
// earlier DisableCookies) and follows every request: recorded pending
// when Colly first hands it to OnRequest, in flight when it leaves
// (OnRequestHeaders, after the breaker's gate), and what its outcome says
// after (the breaker's OnAttempt when the checkpoint observes a breaker, else
// OnScraped and OnError). Register it after the breaker, so that it sees a
// refusal before its own OnRequest. Colly's Clone copies no callbacks:
// Register every clone. A request whose body is not an io.ReadSeeker
// cannot be saved to be re-issued.
//
// Within a run it deduplicates as Colly does: a URL requested once is
// visited, and one that two goroutines find at the same moment is
// requested by one of them (Colly checks and marks in two calls; the
// second caller's mark returns a colly.AlreadyVisitedError, which stops
// its request). After a restart a URL is visited if the checkpoint knows
// it at all: a done or dead one is never fetched again, and one left
// unfinished is fetched by the frontier (Resume, or the queue), not by a
// link that finds it again.
//
// A request's state and attempts change as follows:
//
//	what happened                           state after           attempts
//	Colly hands the request to OnRequest    pending               —
//	it leaves (OnRequestHeaders, after the  in flight             +1
//	breaker's gate)
//	success (validated, with a breaker)     done                  —
//	degraded, invalid, blocked, other 4xx   failed; dead of       —
//	                                        failures once
//	                                        attempts ≥ MaxAttempts
//	the same while the domain's circuit     failed; parked until  set to
//	is not closed                           RetryAt once          MaxAttempts−1
//	                                        attempts ≥ MaxAttempts
//	the domain's circuit opens: its URLs    parked until RetryAt  set to
//	dead of failures since its last                               MaxAttempts−1
//	success, in this run
//	gone (404, 410)                         dead, gone            —
//	RetryDead (dead of failures only)       pending               reset to 0
//	throttled, the breaker sends it again   pending               given back
//	throttled past the breaker's budget     failed                given back
//	refused by the breaker (never sent)     parked until RetryAt  —
//	stopped before it left, or cancelled    pending               given back
//	a redirect to a page already visited    done                  —
//
// With a breaker (Observe, which breakwater.Use calls) the breaker's
// classified outcome decides, after validation; without one, OnScraped is
// success and OnError is classified by breaker.Classify.
func (cp *Checkpoint) Register(c *colly.Collector) {
	cp.mu.Lock()
	cp.startLocked()
	cp.unlock()
	if err := c.SetStorage(collyStorage{cp}); err != nil {
		cp.mu.Lock()
		cp.failLocked(err)
		cp.unlock()
	}
	c.OnRequest(cp.onRequest)
	c.OnRequestHeaders(cp.onRequestHeaders)
	c.OnScraped(cp.onScraped)
	c.OnError(cp.onError)
}

// maxResent bounds the URLs the checkpoint remembers the breaker sent
// again: past it the memory starts over, and a user's copy of one of the
// forgotten ones dropped by the breaker leaves a pending record for the
// next run (nothing is lost).
const maxResent = 4096

// entryLocked returns the live entry of r, made on r's first callback:
// its record (the stored one, or a new one) with the request kept so it
// can be re-issued exactly.
func (cp *Checkpoint) entryLocked(r *colly.Request) *entry {
	if e, ok := cp.entries[r]; ok {
		return e
	}
	if cp.err != nil {
		return nil
	}
	u := r.URL.String()
	body, berr := readBody(r)
	id, retry := cp.retryOf[u]
	if retry {
		delete(cp.retryOf, u)
		if len(cp.resent) >= maxResent {
			clear(cp.resent)
		}
		cp.resent[u] = id
	} else if id, retry = cp.redirects[u]; !retry {
		// A redirect's target stays the visited URL's for every later
		// request of it (kept, not taken: a copy Colly's cache answers
		// leaves no outcome that would map it again).
		id = collyx.RequestID(u, body)
	}
	rec, found, err := cp.recordLocked(id)
	if err != nil {
		cp.failLocked(err)
		return nil
	}
	if !found {
		rec = storage.Record{ID: id, URL: u}
	}
	// A retry (the breaker's, or Colly's Retry in the user's loop) asks
	// for the URL a redirect ended at: the stored request (the original)
	// is the one to re-issue.
	if !retry || rec.Request == nil {
		if berr != nil {
			rec.Request, rec.LastError = nil, berr.Error()
		} else if b, dropped, err := collyx.MarshalRequest(r, body); err != nil {
			rec.Request, rec.LastError = nil, "checkpoint: the request cannot be saved: "+err.Error()
		} else {
			rec.Request = b
			cp.logDroppedLocked(dropped)
		}
	}
	e := &entry{rec: rec}
	cp.entries[r] = e
	return e
}

// resendingLocked reports whether the breaker sends u again after a 429,
// or has sent it: a request for u it aborted is a copy it dropped.
func (cp *Checkpoint) resendingLocked(u string) bool {
	if _, ok := cp.retryOf[u]; ok {
		return true
	}
	_, ok := cp.resent[u]
	return ok
}

func (cp *Checkpoint) logDroppedLocked(keys []string) {
	for _, k := range keys {
		if !cp.dropped[k] {
			cp.dropped[k] = true
			cp.log.Warn().Str("event", "checkpoint_ctx_dropped").Str("key", k).
				Msg("checkpoint: a Ctx value JSON cannot hold is not saved with the request; a resumed request will not have it")
		}
	}
}

// applyLocked moves r's record through ev and writes it.
func (cp *Checkpoint) applyLocked(r *colly.Request, e *entry, ev event, reason string, retryAt time.Time) {
	cp.unholdLocked(e.rec.ID)
	rec := transition(e.rec, ev, cp.opt.maxAttempts, reason, retryAt)
	rec.Updated = cp.now().UTC()
	e.rec = rec
	switch ev {
	case evLeft:
		e.left = true
	case evQueued:
	default:
		e.closed = true
		if fin := r.URL.String(); fin != rec.URL {
			// Redirected: the hop it ended at was marked visited.
			cp.resolveLocked(collyx.RequestID(fin, nil), true)
		}
	}
	if rec.State == storage.Done || rec.State == storage.Dead {
		_ = cp.finalLocked(rec)
	} else {
		_ = cp.putLocked(rec)
	}
	cp.resolveLocked(rec.ID, false)
}

// onRequest records a request Colly is about to handle as pending, and
// stops every request once the store has failed: it could not be recorded.
func (cp *Checkpoint) onRequest(r *colly.Request) {
	cp.mu.Lock()
	defer cp.unlock()
	if cp.err != nil {
		r.Abort()
		return
	}
	if e, ok := cp.entries[r]; ok && e.closed {
		// Refused by the breaker before us: parked already. Nothing else
		// happens to an aborted request.
		delete(cp.entries, r)
		return
	}
	if r.IsAbort() && cp.resendingLocked(r.URL.String()) {
		// A copy of a URL the breaker sends again after a 429, dropped by
		// it (a user's retry loop): the re-send's record is the URL's.
		// After a redirect across hosts the copy asks for the target URL,
		// which would otherwise get a record of its own, left pending.
		// In an Async crawl the dropped copy can reach us before the one
		// that left: it must not take the record the re-send belongs to.
		return
	}
	e := cp.entryLocked(r)
	if e == nil {
		r.Abort()
		return
	}
	e.queued = true
	cp.applyLocked(r, e, evQueued, "", time.Time{})
	if r.IsAbort() {
		// Stopped before it left, by someone else: pending, for the next run.
		delete(cp.entries, r)
	}
}

// onRequestHeaders records the request leaving: in flight, one more
// attempt. It runs after the breaker's gate: a refused request is aborted
// and parked already.
func (cp *Checkpoint) onRequestHeaders(r *colly.Request) {
	if r.IsAbort() {
		return
	}
	cp.mu.Lock()
	defer cp.unlock()
	if cp.err != nil {
		r.Abort()
		return
	}
	e := cp.entryLocked(r)
	if e == nil || e.closed {
		return
	}
	cp.applyLocked(r, e, evLeft, "", time.Time{})
	cp.stampLeftLocked(e)
}

func (cp *Checkpoint) onScraped(resp *colly.Response) { cp.finish(resp, nil) }

func (cp *Checkpoint) onError(resp *colly.Response, err error) { cp.finish(resp, err) }

// finish is the end of a request as Colly reports it (OnError first, for a
// parse error followed by OnScraped: the first wins). With a breaker the
// breaker's OnAttempt decides for a request that left; this only tidies.
func (cp *Checkpoint) finish(resp *colly.Response, err error) {
	if resp == nil || resp.Request == nil {
		return
	}
	r := resp.Request
	cp.mu.Lock()
	defer cp.unlock()
	e, ok := cp.entries[r]
	if !ok {
		return
	}
	switch {
	case e.closed && !e.queued:
		// Refused by the breaker in its OnRequest, which reports the
		// refusal to OnError before our OnRequest runs: that one lets
		// it go, so that it does not take the request for a new one.
	case e.closed:
		delete(cp.entries, r)
	case !e.left:
		// Stopped before it left (aborted in OnRequestHeaders): it stays
		// as it is, pending.
		delete(cp.entries, r)
	case cp.viaBreaker.Load():
		// The breaker's OnAttempt says what it was, and deletes it.
	default:
		ev, reason, retryAt := eventOf(observe.Attempt{Result: circuit.Result{Class: breaker.Classify(resp.StatusCode, err)}, Status: resp.StatusCode, Err: err})
		cp.applyLocked(r, e, ev, reason, retryAt)
		delete(cp.entries, r)
	}
}

// visited is Colly's storage.Storage Visited. Colly calls it once it has
// decided to request id, before the request exists, right after
// IsVisited said id was new. Of two callers IsVisited told so at once,
// the second is told id was visited after all (internal/visitclaim).
func (cp *Checkpoint) visited(id uint64) error {
	cp.mu.Lock()
	defer cp.unlock()
	if cp.err != nil {
		return cp.err
	}
	if _, lost := cp.claims.Settle(id); lost {
		return fmt.Errorf("checkpoint: %w", visitclaim.ErrClaimed)
	}
	cp.announceLocked(id)
	return nil
}

// isVisited is Colly's storage.Storage IsVisited: a URL is visited if this
// run requested it or the checkpoint knows it from any run. URLs an
// earlier run did not finish are requested again by the frontier (Resume
// or the queue), which IsVisited lets through once each.
func (cp *Checkpoint) isVisited(id uint64) (bool, error) {
	cp.mu.Lock()
	if cp.err != nil {
		defer cp.unlock()
		return false, cp.err
	}
	if n := cp.tokens[id]; n > 0 {
		if n == 1 {
			delete(cp.tokens, id)
		} else {
			cp.tokens[id] = n - 1
		}
		cp.unlock()
		return false, nil
	}
	_, ann := cp.announced[id]
	_, hop := cp.hops[id]
	if ann || hop {
		cp.unlock()
		return true, nil
	}
	// Claimed before the store is asked, so that a caller whose request
	// is recorded while this one waits for the store still counts as a
	// rival.
	cp.claims.Add(id)
	cp.unlock()
	_, ok, err := cp.store.Get(id)
	if err != nil || ok {
		cp.mu.Lock()
		defer cp.unlock()
		cp.claims.Drop(id)
		return ok, cp.failLocked(err)
	}
	return false, nil
}

// hostCookies is Colly's storage.Storage Cookies: the cookies of u's
// host, as setHostCookies last saved them (in this run or an earlier one).
func (cp *Checkpoint) hostCookies(u *url.URL) string {
	cp.mu.Lock()
	defer cp.unlock()
	if v, ok := cp.cookies.Get(u.Host); ok {
		return v
	}
	v, _, err := cp.store.Meta(keyCookie + u.Host)
	if err != nil {
		cp.failLocked(err)
		return ""
	}
	cp.cookies.Put(u.Host, string(v))
	return string(v)
}

// setHostCookies is Colly's storage.Storage SetCookies. Cookies are saved
// with the checkpoint, so a resumed crawl keeps its session.
func (cp *Checkpoint) setHostCookies(u *url.URL, cookies string) {
	cp.mu.Lock()
	defer cp.unlock()
	if v, ok := cp.cookies.Get(u.Host); ok && v == cookies {
		return
	}
	cp.cookies.Put(u.Host, cookies)
	if cp.err == nil {
		if err := cp.store.SetMeta(keyCookie+u.Host, []byte(cookies)); err != nil {
			cp.failLocked(err)
		}
	}
	if cp.err != nil {
		cp.cookies.KeepAll = true // the store no longer has every host's cookies
	}
}
