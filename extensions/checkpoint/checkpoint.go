package checkpoint

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/internal/packmap"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
)

// Format is the version of the checkpoint's own metadata (run history,
// breaker states) this build writes and reads.
const Format = 1

// Metadata keys, in the store's key/value space.
const (
	keyFormat   = "checkpoint/format"
	keyRuns     = "checkpoint/runs"
	keyBreakers = "checkpoint/breakers"
	keyCookie   = "checkpoint/cookie/"
)

// ErrStore is wrapped by every error the checkpoint reports because its
// store failed: the crawl's progress can no longer be saved.
var ErrStore = errors.New("checkpoint: the store failed")

// Checkpoint keeps the state of every URL of a crawl in a storage.Store so
// that a crawl stopped at any moment can be resumed without losing a URL
// or fetching a done page again. Register wires it into a collector. It
// is safe for concurrent use.
type Checkpoint struct {
	store storage.Store
	where string // the store as errors name it: its file, if it has one
	opt   Config // resolved: defaults filled in

	observed   observe.Subjects // the breakers Observe was given
	viaBreaker atomic.Bool      // Observe was called: outcomes come from the breaker

	// The collectors registered, by name (collectors.go).
	colls              atomic.Pointer[collectors] // never nil; replaced whole, under cmu
	cmu                sync.Mutex
	warnedUnregistered atomic.Bool     // a collector not registered here was logged
	strandLogged       map[string]bool // owners whose URLs were left unissued, logged once each (mu)

	// Locking: live.go. live holds the requests between their first
	// callback and their outcome; an entry changes under its record's stripe.
	live shardedMap[*colly.Request, *entry]
	ids  [idStripes]stripe // a record's read, state change and write are one step under its stripe

	// vmu guards what Colly's visited-set calls need, not to wait for mu.
	vmu       sync.Mutex
	tokens    map[uint64]int      // IDs the frontier issued: IsVisited lets each through once
	claims    storage.VisitClaims // IDs IsVisited is deciding or told new, Visited not yet called
	announced map[uint64]announce // Visited by Colly, not yet requested (see barrier.go)
	hops      map[uint64]struct{} // Visited by Colly and never requested: redirect hops
	annSeq    uint64              // announcements so far
	anns      announcements       // the same, in the order they were made

	// bmu guards the final records held back (barrier.go).
	bmu       sync.Mutex
	held      heldRecords          // final records waiting for the links found before them
	releasing map[uint64]releasing // taken off held by release, not yet written
	releases  uint64               // records release took so far: each one's seq
	heldN     atomic.Int64         // held and releasing records: none, no lock

	// rmu guards the URLs of re-sends and redirects, and the Ctx keys logged.
	rmu       sync.Mutex
	rmuUsed   atomic.Bool       // retryOf or redirects is not empty
	retryOf   map[string]uint64 // URL a breaker retry will request → the record it belongs to
	resent    map[string]uint64 // URL a breaker retry did request → the record it belongs to (at most maxResent)
	redirects map[string]uint64 // URL a redirect ended at, not done there → the record it belongs to (at most maxResent)
	dropped   map[string]bool   // Ctx keys left out of saved requests, logged once each

	// omu guards outage.
	omu       sync.Mutex
	outageN   atomic.Int32           // len(outage)
	outage    map[string]*outageDead // domain → its URLs dead of failures since its last success (outage.go)
	outageSeq atomic.Uint64          // orders attempts leaving and URLs dying, for outage

	err  atomic.Pointer[error] // the store's first error
	told atomic.Bool           // the hooks were called with it

	updates, heldDone, graceFreed atomic.Int64 // Stats counted on the per-page path

	sinks  sinks                        // the Sinks, and the lines staged for them (sink.go)
	pend   pending                      // written, not yet put into the store (commit.go)
	fresh  shardedMap[uint64, struct{}] // IDs IsVisited found no record of, their entry not yet made (IsVisited)
	active atomic.Int64                 // callbacks under way

	// cookies is the write-through cookie cache, in shards by host: Colly's
	// jar asks on every request. A shard's lock is taken alone.
	cookies    [cookieShards]cookieShard
	cookieSeed maphash.Seed

	mu          sync.Mutex
	front       []uint64                // the queue: earlier runs' unfinished, then this run's (queue.go)
	b           observe.Domains         // the breaker's domains, attached by Observe
	saved       map[string]savedCircuit // open domains and closed ones with failures, as saved
	filtered    map[uint64]struct{}     // unfinished URLs the collector refused to resume (filters, depth, robots)
	runs        []runRecord             // every run, this one last once started
	started     bool
	earlier     int64 // records by earlier runs that ended, counted when this one started
	earlierURLs int64 // URLs done by earlier runs that were killed (their records unknown)
	closed      bool
	stats       Stats // but for Updates, HeldDone, GraceFreed
}

// entry is one live request: the record as last written.
type entry struct {
	id       uint64 // rec.ID, read without its stripe
	rec      storage.Record
	left     bool   // reached the network in this attempt
	closed   bool   // its outcome is recorded
	queued   bool   // the checkpoint's OnRequest saw it
	resolved bool   // its ID's announcement was resolved (barrier.go)
	leftSeq  uint64 // when the attempt left, in outageSeq (outage.go)

	url       *url.URL // the request's URL when the entry was made
	urlString string   // its String() then
}

// Stats counts what the checkpoint did in this run.
type Stats struct {
	Redriven   int // URLs re-issued by Resume or handed to Colly's queue from an earlier run
	Deferred   int // URLs left parked because their domain may not be probed yet
	Refused    int // URLs the collector would not issue on resume (filters, depth): left as they were
	Stranded   int // URLs not issued on resume: the collector that asked for them is not registered in this run
	Updates    int // records written
	HeldDone   int // done records that had to wait for the links found on their page
	GraceFreed int // waits ended by the grace period (a redirect hop was never requested)
}

// New returns a checkpoint on s (storage/bolt, storage/redis, or
// storage/memory for no resume). Checkpoint metadata of a newer format, or
// unreadable, is refused (storage.ErrNewerFormat, storage.ErrCorrupt).
// Close does not close s.
func New(s storage.Store, c Config) (*Checkpoint, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: checkpoint.New: nil store", storage.ErrInvalid)
	}
	o, err := resolve(c)
	if err != nil {
		return nil, err
	}
	cp := &Checkpoint{
		store: s, where: "the checkpoint store", opt: o,
		retryOf:      map[string]uint64{},
		resent:       map[string]uint64{},
		redirects:    map[string]uint64{},
		tokens:       map[uint64]int{},
		announced:    map[uint64]announce{},
		hops:         map[uint64]struct{}{},
		held:         heldRecords{ids: map[uint64]int{}},
		releasing:    map[uint64]releasing{},
		cookieSeed:   maphash.MakeSeed(),
		saved:        map[string]savedCircuit{},
		outage:       map[string]*outageDead{},
		filtered:     map[uint64]struct{}{},
		dropped:      map[string]bool{},
		strandLogged: map[string]bool{},
		sinks:        sinks{by: map[sinkKey]*Sink{}, staged: map[uint64]*staged{}},
	}
	cp.colls.Store(&collectors{byColl: map[*colly.Collector]*named{}, byName: map[string]*named{}, wanted: map[*colly.Collector]string{}})
	liveSeed := maphash.MakeSeed()
	cp.live.hash = func(r *colly.Request) uint64 { return maphash.Comparable(liveSeed, r) }
	cp.fresh.hash = idHash
	cp.pend.start = time.Now()
	for i := range cp.cookies {
		cp.cookies[i].m = packmap.NewRecent[string](cookieCacheSize / cookieShards)
	}
	if f, ok := s.(interface{ Path() string }); ok && f.Path() != "" {
		cp.where = f.Path()
	}
	if v, ok, err := s.Meta(keyFormat); err != nil {
		return nil, fmt.Errorf("checkpoint: reading the format: %w", err)
	} else if ok {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("checkpoint: %w: its metadata format %q is unreadable; move the file aside to start afresh", storage.ErrCorrupt, v)
		}
		if n > Format {
			return nil, fmt.Errorf("checkpoint: %w: its metadata is format %d, this build reads %d; resume it with the release that wrote it", storage.ErrNewerFormat, n, Format)
		}
	}
	if err := cmp.Or(readJSON(s, keyRuns, &cp.runs), readJSON(s, keyBreakers, &cp.saved)); err != nil {
		return nil, err
	}
	return cp, nil
}

func readJSON(s storage.Store, key string, v any) error {
	b, ok, err := s.Meta(key)
	if err != nil {
		return fmt.Errorf("checkpoint: reading %s: %w", key, err)
	}
	if !ok {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("checkpoint: %w: its %s metadata is not readable (%v); move the file aside to start afresh", storage.ErrCorrupt, key, err)
	}
	return nil
}

func (cp *Checkpoint) writeJSONLocked(key string, v any) {
	b, err := json.Marshal(v)
	if err == nil {
		err = cp.store.SetMeta(key, b)
	}
	cp.fail(err)
}

// storeErr returns the store's first error (wrapping ErrStore), or nil,
// having told the hooks of it.
func (cp *Checkpoint) storeErr() error {
	cp.tellHooks()
	return cp.errNow()
}

// Stats returns what the checkpoint did so far in this run.
func (cp *Checkpoint) Stats() Stats {
	cp.mu.Lock()
	st := cp.stats
	cp.unlock()
	st.Updates, st.HeldDone, st.GraceFreed = int(cp.updates.Load()), int(cp.heldDone.Load()), int(cp.graceFreed.Load())
	return st
}

// fail records the store's first error and returns it; the next release
// of cp.mu, or tellHooks, tells the hooks.
func (cp *Checkpoint) fail(err error) error {
	if err == nil {
		return nil
	}
	e := fmt.Errorf("%w (%s): %w; what was committed before is intact, fix the cause and resume", ErrStore, cp.where, err)
	if !cp.err.CompareAndSwap(nil, &e) {
		return cp.errNow()
	}
	cp.opt.Logger.Error().Str("event", "checkpoint_store_failed").Err(err).Msg("checkpoint: the store cannot be written; new requests are stopped")
	return e
}

// errNow returns the store's first error (wrapping ErrStore), or nil.
func (cp *Checkpoint) errNow() error {
	if p := cp.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (cp *Checkpoint) failed() bool { return cp.err.Load() != nil }

// unlock releases cp.mu, then calls the hooks if the store failed meanwhile.
func (cp *Checkpoint) unlock() {
	cp.mu.Unlock()
	cp.tellHooks()
}

// tellHooks calls Config.OnStoreError once the store failed, once; the
// caller holds no lock.
func (cp *Checkpoint) tellHooks() {
	if err := cp.errNow(); err != nil && cp.opt.OnStoreError != nil && cp.told.CompareAndSwap(false, true) {
		cp.opt.OnStoreError(err)
	}
}

// putLocked writes recs through the group commit (commit.go): in the
// store once a callback ends, or at flush.
func (cp *Checkpoint) putLocked(recs ...storage.Record) error {
	if cp.failed() {
		return cp.errNow()
	}
	cp.pend.add(recs)
	cp.updates.Add(int64(len(recs)))
	return nil
}

// putBatchesLocked writes recs, 1024 to a Put.
func (cp *Checkpoint) putBatchesLocked(recs []storage.Record) error {
	for i := 0; i < len(recs); i += 1024 {
		if err := cp.putLocked(recs[i:min(i+1024, len(recs))]...); err != nil {
			return err
		}
		if err := cp.flush(true); err != nil {
			return err
		}
	}
	return nil
}

func (cp *Checkpoint) now() time.Time { return cp.opt.Clock.Now() }

// Flush makes every state change so far durable. Without it, how soon a
// change is durable is the store's (storage/bolt: about 50 ms) after the
// group commit hands it over (commit.go: a few ms in a busy crawl); a page's
// done record waits for its links' records, at most Config.Grace
// (docs/checkpoints.md).
func (cp *Checkpoint) Flush() error {
	cp.mu.Lock()
	defer cp.unlock()
	if err := cp.flush(true); err != nil {
		return err
	}
	return cp.fail(cp.store.Flush())
}

// Close ends the run: it writes what is held, the stop time and the open
// domains, and flushes. Call it after Wait, before closing the store. On
// a store error the last changes may be lost; earlier commits are intact.
func (cp *Checkpoint) Close() error {
	cp.mu.Lock()
	if cp.closed {
		cp.unlock()
		return nil
	}
	cp.closed = true
	cp.release(true)
	_ = cp.flush(true) // an error is the store's, below
	if cp.started && !cp.failed() {
		cp.saveBreakersLocked()
		r := &cp.runs[len(cp.runs)-1]
		r.Stopped = cp.now().UTC()
		r.Breakers = cp.openDomainsLocked(false)
		cp.writeJSONLocked(keyRuns, cp.runs)
	}
	err := cp.errNow()
	if err == nil {
		err = cp.fail(cp.store.Flush())
	}
	cp.unlock()
	cp.syncSinks() // their records are in the store; now in their files, on disk
	return err
}
