package checkpoint

// This file is the Colly wiring; the state machine is lifecycle.go.

import (
	"errors"
	"fmt"
	"hash/maphash"
	"net/url"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/internal/packmap"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// collyStorage is the checkpoint as Colly's storage.Storage and queue.Storage.
type collyStorage struct{ *Checkpoint }

// Init returns the store's error, if any.
func (cp collyStorage) Init() error { return cp.storeErr() }

// QueueStorage returns the checkpoint as a Colly queue's storage, for a
// frontier too large for a goroutine per URL:
//
//	q, err := queue.New(threads, cp.QueueStorage())
//
// The queue hands out what earlier runs left unfinished (as Resume would)
// before the requests added in this run; a request whose URL the
// checkpoint knows is not queued again. Register the checkpoint on the
// collector the queue runs.
func (cp *Checkpoint) QueueStorage() queue.Storage { return collyStorage{cp} }

// Register wires the checkpoint into c (a colly.CollectorOption; with
// breakwater.Use, after the breaker). It becomes c's storage (visited set
// and cookies: Colly installs a cookie jar, undoing DisableCookies) and
// follows every request through the states docs/checkpoints.md tables.
// After a restart a URL it knows is visited; an unfinished one is fetched
// by the frontier (Resume, or the queue) on the collector that asked for
// it, with its callbacks. A Clone() copies no callbacks: wire each clone
// as its collector, right after Clone() and before Resume, with
// breakwater.Use(clone, v, b, cp) (or Register alone). Each collector is
// known by its place in the order of registration ("1", "2", ...: the
// same every run) or by the name Name gave it, saved with each of its
// URLs. A clone left out is still followed (its requests pass the
// breaker's transport), but the URLs it leaves unfinished resume on no
// collector: Judge ends the run in error ("unregistered_collector") until
// the program registers it and hands them to it with Adopt. Registering a
// collector again does nothing. A body that is not an io.ReadSeeker
// cannot be saved.
func (cp *Checkpoint) Register(c *colly.Collector) {
	if c == nil || !cp.enroll(c) {
		return
	}
	cp.mu.Lock()
	cp.startLocked()
	cp.unlock()
	cp.fail(c.SetStorage(collyStorage{cp}))
	cp.tellHooks()
	c.OnRequest(collyx.Own(cp.onRequest)) // Breakwater's own: the breaker may refuse before it
	c.OnRequestHeaders(cp.onRequestHeaders)
	c.OnScraped(func(resp *colly.Response) { cp.finish(resp, nil) })
	c.OnError(cp.finish)
}

// errBodyNotReplayable reports a body that cannot be both sent and kept.
var errBodyNotReplayable = errors.New("checkpoint: the request body is not an io.ReadSeeker; it cannot be kept for a resume")

// maxResent bounds the URLs remembered as re-sent or redirected.
const maxResent = 4096

// fileUnder makes a later request of u the record id's: the breaker's
// re-send of a URL throttled there (throttled), else a retry of the URL a
// redirect ended at.
func (cp *Checkpoint) fileUnder(u string, id uint64, throttled bool) {
	cp.rmu.Lock()
	if throttled {
		cp.retryOf[u] = id
	} else {
		putBounded(cp.redirects, u, id)
	}
	cp.rmuUsed.Store(true)
	cp.rmu.Unlock()
}

// putBounded sets m[u] = id, emptying m first if it holds maxResent URLs.
func putBounded(m map[string]uint64, u string, id uint64) {
	if len(m) >= maxResent {
		clear(m)
	}
	m[u] = id
}

// lockEntry returns r's live entry, made on its first callback, with its
// record's stripe locked; nil, nothing locked, once the store failed. bare
// says r is the breaker's report of a request no callback of ours saw (a
// collector not registered here).
func (cp *Checkpoint) lockEntry(r *colly.Request, bare bool) (*entry, *sync.Mutex) {
	if e, ok := cp.live.get(r); ok {
		l := cp.idLock(e.id)
		l.Lock()
		return e, l
	}
	if cp.failed() {
		return nil, nil
	}
	// The request as saved is made before the stripe is locked: marshalling holds no one up.
	u := r.URL.String()
	var req []byte
	var dropped []string
	body, replayable, merr := collyx.ReadBody(r.Body) // the reader left at its start
	if !replayable {
		merr = errBodyNotReplayable
	}
	if len(body) == 0 {
		body = nil // none or empty: the same ID
	}
	if merr == nil {
		if req, dropped, merr = collyx.MarshalRequest(r, u, body); merr != nil {
			merr = fmt.Errorf("checkpoint: the request cannot be saved: %w", merr)
		}
	}
	id, retry := collyx.RequestID(u, body), false
	if cp.rmuUsed.Load() {
		cp.rmu.Lock()
		var rid uint64
		if rid, retry = cp.retryOf[u]; retry {
			delete(cp.retryOf, u)
			putBounded(cp.resent, u, rid)
			id = rid
		} else if rid, retry = cp.redirects[u]; retry {
			// A redirect's target stays the visited URL's (kept, for cached copies).
			id = rid
		}
		cp.rmuUsed.Store(len(cp.retryOf)+len(cp.redirects) > 0)
		cp.rmu.Unlock()
	}
	fresh := cp.fresh.take(id) && !retry
	l := cp.idLock(id)
	l.Lock()
	rec, found, err := cp.recordOf(id, fresh)
	if err != nil {
		cp.fail(err)
		l.Unlock()
		return nil, nil
	}
	if !found {
		rec = storage.Record{ID: id, URL: u}
	}
	// A retry asks for a redirect's target: re-issue the original.
	if !retry || rec.Request == nil {
		if merr != nil {
			rec.Request, rec.LastError = nil, merr.Error()
		} else {
			// Saved with the collector that asked for it, to resume on (collectors.go).
			var tail []byte
			if found && rec.Request != nil {
				tail = cp.ownerTailOf(rec.Request, r)
			} else {
				tail = cp.tailFor(r, bare)
			}
			if tail != nil {
				req = withTail(req, tail)
			}
			rec.Request = req
			cp.logDropped(dropped)
		}
	}
	e := &entry{id: id, rec: rec, url: r.URL, urlString: u}
	cp.live.put(r, e)
	return e, l
}

// resending reports whether the breaker re-sends (or re-sent) u after a 429.
func (cp *Checkpoint) resending(u string) bool {
	cp.rmu.Lock()
	defer cp.rmu.Unlock()
	_, retry := cp.retryOf[u]
	_, resent := cp.resent[u]
	return retry || resent
}

func (cp *Checkpoint) logDropped(keys []string) {
	if len(keys) == 0 {
		return
	}
	cp.rmu.Lock()
	defer cp.rmu.Unlock()
	for _, k := range keys {
		if !cp.dropped[k] {
			cp.dropped[k] = true
			cp.opt.Logger.Warn().Str("event", "checkpoint_ctx_dropped").Str("key", k).
				Msg("checkpoint: a Ctx value JSON cannot hold is not saved with the request; a resumed request will not have it")
		}
	}
}

// applyLocked moves r's record through ev and writes it (e's stripe held;
// the caller calls end once it holds none, for what was held back).
func (cp *Checkpoint) applyLocked(r *colly.Request, e *entry, ev event, reason string, retryAt time.Time) {
	cp.dropHeld(e.id) // a newer state supersedes a held one
	rec := transition(e.rec, ev, cp.opt.MaxAttempts, reason, retryAt)
	rec.Updated = cp.now().UTC()
	e.rec = rec
	switch ev {
	case evLeft:
		e.left = true
	case evQueued:
	default:
		e.closed = true
		if fin := e.urlOf(r); fin != rec.URL {
			// Redirected: the hop it ended at was marked visited.
			cp.resolve(collyx.RequestID(fin, nil), true)
		}
	}
	if ev == evLeft || (e.closed && rec.State != storage.Done) {
		cp.unstage(e.id) // a new attempt writes its own records; one not done, none (sink.go)
	}
	if rec.State == storage.Done || rec.State == storage.Dead {
		_ = cp.finalLocked(rec)
	} else {
		_ = cp.putLocked(rec)
	}
	if !e.resolved {
		// Once: the record written, IsVisited knows the URL, and Colly
		// marks it visited no more (a request made again, by a Retry or
		// a resume, is an entry of its own).
		cp.resolve(rec.ID, false)
		e.resolved = true
	}
}

// end ends a callback begun with cp.active.Add(1), holding no stripe: it
// writes the held records it let go, puts the buffer when it is due
// (commit.go) and tells the hooks of a store failure.
func (cp *Checkpoint) end() {
	idle := cp.active.Add(-1) == 0
	cp.release(false)
	if idle || cp.pend.due() {
		_ = cp.flush(false)
	}
	cp.tellHooks()
}

// urlOf is r.URL.String(), as lockEntry read it while r.URL is the same
// URL: Colly gives a redirect's request a URL of its own. (One changed in
// place is a URL Colly never marked visited: resolve has nothing to do
// with its ID either way.)
func (e *entry) urlOf(r *colly.Request) string {
	if r.URL == e.url && e.url != nil {
		return e.urlString
	}
	return r.URL.String()
}

// onRequest records a request as pending, or aborts it once the store failed.
func (cp *Checkpoint) onRequest(r *colly.Request) {
	cp.active.Add(1)
	defer cp.end()
	if cp.failed() {
		r.Abort()
		return
	}
	if e, ok := cp.live.get(r); ok && e.closed {
		// Refused by the breaker before us: parked already.
		cp.live.take(r)
		return
	}
	if r.IsAbort() && cp.resending(r.URL.String()) {
		// A user's copy of a URL the breaker re-sends: the re-send owns the record.
		return
	}
	e, l := cp.lockEntry(r, false)
	if e == nil {
		r.Abort()
		return
	}
	e.queued = true
	cp.applyLocked(r, e, evQueued, "", time.Time{})
	l.Unlock()
	if r.IsAbort() {
		// Stopped before it left: pending, for the next run.
		cp.live.take(r)
	}
}

// onRequestHeaders records the request leaving: in flight, one more attempt.
func (cp *Checkpoint) onRequestHeaders(r *colly.Request) {
	if r.IsAbort() {
		return
	}
	cp.active.Add(1)
	defer cp.end()
	if cp.failed() {
		r.Abort()
		return
	}
	e, l := cp.lockEntry(r, false)
	if e == nil {
		return
	}
	defer l.Unlock()
	if e.closed {
		return
	}
	cp.applyLocked(r, e, evLeft, "", time.Time{})
	e.leftSeq = cp.outageSeq.Add(1) // for outage.go
}

// finish is OnError/OnScraped; with a breaker it only tidies.
func (cp *Checkpoint) finish(resp *colly.Response, err error) {
	if resp == nil || resp.Request == nil {
		return
	}
	r := resp.Request
	e, ok := cp.live.get(r)
	if !ok {
		// Mostly a page the breaker's OnAttempt recorded and let go: no lock.
		return
	}
	cp.active.Add(1)
	defer cp.end()
	l := cp.idLock(e.id)
	l.Lock()
	defer l.Unlock()
	switch {
	case e.closed && !e.queued:
		// Refused by the breaker before our OnRequest, which lets it go.
	case e.closed, !e.left && (resp.StatusCode == 0 || cp.viaBreaker.Load()):
		// Recorded, or aborted in OnRequestHeaders (it stays pending); with
		// a breaker, its OnAttempt settled an answer of Colly's cache.
		cp.live.take(r)
	case cp.viaBreaker.Load():
		// The breaker's OnAttempt says what it was, and deletes it. A
		// collector registered here but not with the breaker is gated at
		// its transport, which reports a redirect's hop under the URL
		// visited: a retry of the target Colly moved r to is this record's.
		if err != nil && r.URL.String() != e.urlString {
			cp.fileUnder(r.URL.String(), e.id, false)
		}
	default:
		if !e.left {
			// Colly's cache answered (no OnRequestHeaders): an attempt all the same.
			e.rec, e.left = transition(e.rec, evLeft, cp.opt.MaxAttempts, "", time.Time{}), true
		}
		ev, reason, retryAt := eventOf(observe.Attempt{Result: circuit.Result{Class: breaker.Classify(resp.StatusCode, err)}, Status: resp.StatusCode, Err: err})
		cp.applyLocked(r, e, ev, reason, retryAt)
		cp.live.take(r)
	}
}

// Visited is Colly's storage.Storage Visited. Of two callers IsVisited
// told id was new, the second gets an error (storage.VisitClaims).
func (cp collyStorage) Visited(id uint64) error {
	if cp.failed() {
		return cp.storeErr()
	}
	cp.vmu.Lock()
	defer cp.vmu.Unlock()
	if _, lost := cp.claims.Settle(id); lost {
		return fmt.Errorf("checkpoint: %w", storage.ErrClaimed)
	}
	cp.announceVisitLocked(id)
	return nil
}

// IsVisited is Colly's storage.Storage IsVisited (a frontier issue passes once).
func (cp collyStorage) IsVisited(id uint64) (bool, error) {
	if cp.failed() {
		return false, cp.storeErr()
	}
	cp.vmu.Lock()
	token := cp.takeTokenVisitLocked(id)
	if known := !token && cp.knownVisitLocked(id); token || known {
		cp.vmu.Unlock()
		return known, nil
	}
	// Claimed before the store is asked: a caller meanwhile is a rival.
	cp.claims.Add(id)
	cp.vmu.Unlock()
	if _, ok, err := cp.lookup(id); err != nil || ok {
		cp.claims.Drop(id)
		err = cp.fail(err)
		cp.tellHooks()
		return ok, err
	}
	// Its request's first entry need not ask the store again. One whose
	// request never comes is forgotten when its shard is full.
	sh := cp.fresh.lock(id)
	if len(sh.m) >= freshMax {
		sh.m = map[uint64]struct{}{}
	}
	sh.m[id] = struct{}{}
	sh.mu.Unlock()
	return false, nil
}

// freshMax is how many fresh IDs a shard holds.
const freshMax = 256

// takeTokenVisitLocked spends one of the frontier's tokens for id, if it
// has one (cp.vmu held).
func (cp *Checkpoint) takeTokenVisitLocked(id uint64) bool {
	n := cp.tokens[id]
	if n == 1 {
		delete(cp.tokens, id)
	} else if n > 1 {
		cp.tokens[id] = n - 1
	}
	return n > 0
}

// knownVisitLocked reports whether Colly marked id visited in this run
// (cp.vmu held).
func (cp *Checkpoint) knownVisitLocked(id uint64) bool {
	_, ann := cp.announced[id]
	_, hop := cp.hops[id]
	return ann || hop
}

// cookieCacheSize is how many hosts a generation of the write-through
// cookie cache holds, so that Colly's jar does not read the store on
// every request. Once a store write failed it keeps every host (KeepAll).
const cookieCacheSize = 4096

// cookieShards is how many locks the cookie cache is spread over, by host.
const cookieShards = 16

// cookieShard is the cookie cache of the hosts of one shard.
type cookieShard struct {
	mu sync.Mutex
	m  packmap.Recent[string] // host → cookie string, for the hosts used last
}

// cookieShard is host's shard of the cookie cache.
func (cp *Checkpoint) cookieShard(host string) *cookieShard {
	return &cp.cookies[maphash.String(cp.cookieSeed, host)%cookieShards]
}

// Cookies is Colly's storage.Storage Cookies, as last saved in any run.
func (cp collyStorage) Cookies(u *url.URL) string {
	sh := cp.cookieShard(u.Host)
	sh.mu.Lock()
	v, ok := sh.m.Get(u.Host)
	sh.mu.Unlock()
	if ok {
		return v
	}
	// The store is read without the lock: a host's first request waits for no other's.
	b, _, err := cp.store.Meta(keyCookie + u.Host)
	if err != nil {
		cp.fail(err)
		cp.tellHooks()
		return ""
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if v, ok := sh.m.Get(u.Host); ok {
		return v // set meanwhile (SetCookies): newer than what was read
	}
	sh.m.Put(u.Host, string(b))
	return string(b)
}

// SetCookies is Colly's storage.Storage SetCookies.
func (cp collyStorage) SetCookies(u *url.URL, cookies string) {
	sh := cp.cookieShard(u.Host)
	sh.mu.Lock()
	if v, ok := sh.m.Get(u.Host); ok && v == cookies {
		sh.mu.Unlock()
		return
	}
	sh.m.Put(u.Host, cookies)
	if !cp.failed() {
		cp.fail(cp.store.SetMeta(keyCookie+u.Host, []byte(cookies)))
	}
	sh.mu.Unlock()
	if cp.failed() {
		// The store no longer has every host's cookies: every shard keeps all.
		for i := range cp.cookies {
			c := &cp.cookies[i]
			c.mu.Lock()
			c.m.KeepAll = true
			c.mu.Unlock()
		}
		cp.tellHooks()
	}
}
