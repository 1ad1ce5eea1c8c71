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
// fits breakwater.Use: register it after the breaker, so that it sees a
// refusal before its own OnRequest.
//
// It makes the checkpoint c's storage (the visited set and the cookies;
// Colly then installs a cookie jar, which undoes an earlier
// DisableCookies) and follows every request: pending at its first
// OnRequest, in flight when it leaves (OnRequestHeaders, after the
// breaker's gate), then what its outcome says (the breaker's, once
// Observe is called; else OnScraped and OnError). docs/checkpoints.md
// tables the states. After a restart a URL the checkpoint knows is
// visited: a done or dead one is never fetched again, and an unfinished
// one is fetched by the frontier (Resume, or the queue).
//
// Colly's Clone copies no callbacks: Register every clone. A request whose
// body is not an io.ReadSeeker cannot be saved to be re-issued.
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
	c.OnScraped(func(resp *colly.Response) { cp.finish(resp, nil) })
	c.OnError(cp.finish)
}

// maxResent bounds the URLs remembered as re-sent by the breaker, or
// redirected; past it the memory starts over (at worst a pending record is
// left for the next run).
const maxResent = 4096

// entryLocked returns the live entry of r, made on r's first callback
// with its record and the request to re-issue.
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
		// A redirect's target stays the visited URL's (kept, not taken:
		// a copy Colly's cache answers maps it no more).
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
	// A retry asks for the URL a redirect ended at: the stored request
	// (the original) is the one to re-issue.
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
	cp.held.drop(e.rec.ID) // a newer state supersedes a held one
	rec := transition(e.rec, ev, cp.opt.MaxAttempts, reason, retryAt)
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
		// Refused by the breaker before us: parked already.
		delete(cp.entries, r)
		return
	}
	if r.IsAbort() && cp.resendingLocked(r.URL.String()) {
		// A user's copy of a URL the breaker re-sends after a 429, dropped
		// by it: the re-send owns the record (in an Async crawl the copy
		// may come first; after a redirect it names the target URL).
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
		// Stopped before it left: pending, for the next run.
		delete(cp.entries, r)
	}
}

// onRequestHeaders records the request leaving: in flight, one more
// attempt. A request the breaker's gate refused is parked already.
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

// finish is the end of a request as Colly reports it (the first of
// OnError and OnScraped wins). With a breaker its OnAttempt decides for a
// request that left; this only tidies.
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
		// Refused by the breaker, reported before our OnRequest, which
		// lets it go.
	case e.closed:
		delete(cp.entries, r)
	case !e.left:
		// Aborted in OnRequestHeaders: it stays pending.
		delete(cp.entries, r)
	case cp.viaBreaker.Load():
		// The breaker's OnAttempt says what it was, and deletes it.
	default:
		ev, reason, retryAt := eventOf(observe.Attempt{Result: circuit.Result{Class: breaker.Classify(resp.StatusCode, err)}, Status: resp.StatusCode, Err: err})
		cp.applyLocked(r, e, ev, reason, retryAt)
		delete(cp.entries, r)
	}
}

// Visited is Colly's storage.Storage Visited, called right after
// IsVisited said id was new. Of two callers told so at once, the second
// is told id was visited after all (internal/visitclaim).
func (s collyStorage) Visited(id uint64) error {
	cp := s.cp
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

// IsVisited is Colly's storage.Storage IsVisited: a URL is visited if the
// checkpoint knows it from any run, except once for each the frontier
// issues.
func (s collyStorage) IsVisited(id uint64) (bool, error) {
	cp := s.cp
	cp.mu.Lock()
	if cp.err != nil {
		defer cp.unlock()
		return false, cp.err
	}
	if cp.takeTokenLocked(id) {
		cp.unlock()
		return false, nil
	}
	if cp.knownLocked(id) {
		cp.unlock()
		return true, nil
	}
	// Claimed before the store is asked: a caller recorded meanwhile is
	// still a rival.
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

// takeTokenLocked spends one of the frontier's tokens for id, if it has one.
func (cp *Checkpoint) takeTokenLocked(id uint64) bool {
	n := cp.tokens[id]
	if n == 1 {
		delete(cp.tokens, id)
	} else if n > 1 {
		cp.tokens[id] = n - 1
	}
	return n > 0
}

// knownLocked reports whether Colly marked id visited in this run: an
// announced link, or a redirect hop.
func (cp *Checkpoint) knownLocked(id uint64) bool {
	_, ann := cp.announced[id]
	_, hop := cp.hops[id]
	return ann || hop
}

// Cookies is Colly's storage.Storage Cookies: u's host's cookies, as
// last saved in any run.
func (s collyStorage) Cookies(u *url.URL) string {
	cp := s.cp
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

// SetCookies is Colly's storage.Storage SetCookies: a resumed crawl
// keeps its session.
func (s collyStorage) SetCookies(u *url.URL, cookies string) {
	cp := s.cp
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
