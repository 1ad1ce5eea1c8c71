package redis

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	collystorage "github.com/gocolly/colly/v2/storage"
	goredis "github.com/redis/go-redis/v9"
)

// CollyStorage spreads one Colly crawl over several processes: Colly's
// storage.Storage (visited set, cookies) and queue.Storage (the frontier)
// on Redis. Use a synchronous collector: the queue's threads are the
// worker's parallelism.
//
// IsVisited claims a URL atomically, so one worker fetches it. GetRequest
// leases a job (Config.VisibilityTimeout, extended while under way) until
// Ack, Fail or Park, which breakwater.Use reports (else call Ack from
// OnScraped and Fail from OnError): a page is fetched twice only if its
// worker died before the Ack, and never lost. Requests Colly drops before
// OnRequest (a URL filter, MaxDepth, robots.txt) are dead-lettered after
// their leases: filter before adding. While Redis is unreachable calls
// retry for up to Config.MaxOutage; a lost state fails every call with
// ErrStateLost. docs/redis.md has the details.
type CollyStorage struct {
	observed observe.Subjects // the breakers Observe was given
	q        *jobQueue
	shards   [][]string // each shard's keys: the queue's six, visited, cookies, run marker
	s        settings
	link     *link

	held    sync.Map            // job ID → *heldJob: claimed by this process, not yet reported
	keep    keeper              // the leases of the held jobs under way (leasekeeper.go)
	run     runWatch            // the crawl's run marker (runstate.go)
	claimed storage.VisitClaims // request IDs IsVisited claimed, Visited not called yet
	reqs    sync.Map            // *colly.Request → request id, from OnRequest
	wake    chan struct{}
	done    chan struct{}
	close   sync.Once
}

var (
	_ collystorage.Storage = (*CollyStorage)(nil)
	_ queue.Storage        = (*CollyStorage)(nil)
)

// ErrDrained is what GetRequest returns when no job is left in the crawl.
var ErrDrained = errors.New("the crawl's queue is drained")

// NewCollyStorage returns the Colly storage of the crawl crawlID on
// client. It does not contact Redis.
func NewCollyStorage(client goredis.UniversalClient, crawlID string, c Config) (*CollyStorage, error) {
	q, err := newQueue(client, crawlID, c)
	if err != nil {
		return nil, err
	}
	s := q.s
	var shards [][]string
	for i, p := range shardPrefixes(s.Namespace, crawlID, s.Shards) {
		shards = append(shards, append(slices.Clone(q.shards[i]), p+"c:visited", p+"c:cookies", p+"c:run"))
		// The queue's scripts get the run marker as a seventh key (the guard).
		q.shards[i] = append(slices.Clip(q.shards[i]), p+"c:run")
	}
	return &CollyStorage{q: q, shards: shards, s: s, link: newLink("colly storage", crawlID, "every call waits and retries", s),
		keep: keeper{jobs: map[string]*heldJob{}}, wake: make(chan struct{}, 1), done: make(chan struct{})}, nil
}

// Stats counts the crawl's jobs by where they are; it does not wait out an
// outage (ErrUnavailable).
func (cs *CollyStorage) Stats(ctx context.Context) (Stats, error) { return cs.q.stats(ctx, cs.s.now()) }

// DeadLetter is a URL the crawl gave up on: its attempts spent.
type DeadLetter struct {
	URL       string
	Attempts  int       // failed attempts, the last one included
	LastError string    // the error of the last attempt (at most 1 KiB)
	FailedAt  time.Time // when it died
}

// DeadLetters returns up to limit (≤ 0: 100) dead letters, newest first.
func (cs *CollyStorage) DeadLetters(ctx context.Context, limit int) ([]DeadLetter, error) {
	jobs, err := cs.q.Dead(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]DeadLetter, len(jobs))
	for i, j := range jobs {
		out[i] = DeadLetter{URL: j.URL, Attempts: j.Attempts, LastError: j.LastError, FailedAt: j.FailedAt}
	}
	return out, nil
}

func (cs *CollyStorage) keysOf(id string) []string { return cs.shards[shardOf(id, len(cs.shards))] }

// Init implements storage.Storage and queue.Storage; it does no I/O.
func (cs *CollyStorage) Init() error { return nil }

// Close ends the crawl in this process: GetRequest hands out nothing more
// and QueueSize reports 0; held jobs come back to the other workers after
// their lease. The Redis client stays open.
func (cs *CollyStorage) Close() error {
	cs.close.Do(func() { close(cs.done) })
	return nil
}

// Register makes cs c's storage (undoing DisableCookies) and notes in
// OnRequest which request each one is, so that its outcome finds its job
// after a redirect. It is a colly.CollectorOption: Register every clone.
func (cs *CollyStorage) Register(c *colly.Collector) {
	_ = c.SetStorage(cs) // cannot fail: Init does no I/O
	c.OnRequest(func(r *colly.Request) {
		if !r.IsAbort() { // an aborted request has been reported already, or never will be
			id := requestIDOf(r)
			cs.reqs.Store(r, id)
			cs.started(id)
		}
	})
}

// Observe hooks the storage to a breaker (observe.Observer): OnAttempt and
// OnRefused settle each request's job; with Config.WaitHorizon the
// breaker's ResendHorizon parks a throttled URL due later than that.
func (cs *CollyStorage) Observe(s observe.Subject) error {
	if !cs.observed.Add(s) {
		return nil // already following s
	}
	h := observe.Hooks{OnAttempt: cs.outcome, OnRefused: cs.refused}
	if cs.s.WaitHorizon >= 0 {
		h.ResendHorizon = max(cs.s.WaitHorizon, time.Nanosecond)
	}
	return s.Hook(h)
}

// outcome settles a request's job by observe.StateOf, as
// extensions/checkpoint does; a Resent job stays in flight.
func (cs *CollyStorage) outcome(a observe.Attempt) {
	var err error
	switch state, _, until := observe.StateOf(a); state {
	case observe.Resent:
		cs.reqs.Delete(a.Request) // the breaker's Retry is a new *colly.Request
		return
	case observe.Done, observe.Gone, observe.Settled: // Settled parked would be refused for ever
		err = cs.Ack(a.Request)
	case observe.Parked, observe.Cancelled:
		err = cs.Park(a.Request, until) // zero but for Parked: at once
	default:
		err = cs.Fail(a.Request, cmp.Or(a.Err, fmt.Errorf("%s (HTTP %d)", a.Result.Class, a.Status)))
	}
	cs.unsaved(a.Request, err, "a request's outcome could not be saved")
}

// unsaved logs that r's outcome was not saved (err), unless the crawl's
// state is lost (logged already), which a job gone may mean.
func (cs *CollyStorage) unsaved(r *colly.Request, err error, what string) {
	if errors.Is(err, ErrUnknownJob) {
		_ = cs.watch(context.Background(), true)
	}
	if err != nil && cs.lost() == nil {
		cs.s.Logger.Warn().Str("event", "outcome_not_saved").Str("crawl", cs.q.crawl).Str("url", r.URL.String()).
			Err(err).Msg("breakwater/redis: " + what + "; its job comes back after the lease")
	}
}

// refused parks a refused request until its RetryAt, plus up to a tenth of
// the wait as jitter so a domain's jobs do not all come back at once.
func (cs *CollyStorage) refused(r *colly.Request, e *circuit.OpenError) {
	until := e.RetryAt
	if wait := until.Sub(cs.s.now()); wait > 0 {
		until = until.Add(time.Duration(cs.q.float64() * float64(wait) / 10))
	}
	cs.unsaved(r, cs.Park(r, until), "a refused request could not be parked")
}

// Ack reports that r was fetched: its job (if any) done, its URL visited
// for good. It returns ErrLeaseLost if another worker holds the job now.
func (cs *CollyStorage) Ack(r *colly.Request) error {
	return cs.report(r, scriptCollyDone, "done", "ack", func(ctx context.Context, job *queueJob) error {
		n, err := scriptCollyAck.Run(ctx, cs.q.client, cs.keysOf(job.ID), cs.q.args(cs.s.now(), job.ID, job.lease)...).Int()
		if err != nil {
			return wrapErr(ctx, cs.q.crawl, "ack", err)
		}
		return cs.q.status("ack", job, int64(n))
	})
}

// Fail reports that r's attempt failed with cause: its job is retried
// after a backoff, or dead-lettered at MaxAttempts; a plain Visit's claim
// is dropped.
func (cs *CollyStorage) Fail(r *colly.Request, cause error) error {
	return cs.report(r, scriptCollyRelease, "release", "fail", func(ctx context.Context, job *queueJob) error {
		return cs.q.Fail(ctx, job, cause)
	})
}

// Park puts r's job back without spending an attempt, to be claimed again
// no earlier than until. A plain Visit's claim is dropped. Ack, Fail and
// Park also settle the job a redirect's hop of r took up (see heldJob).
func (cs *CollyStorage) Park(r *colly.Request, until time.Time) error {
	return cs.report(r, scriptCollyRelease, "release", "park", func(ctx context.Context, job *queueJob) error {
		return cs.q.Park(ctx, job, until)
	})
}

// report settles the job held of r (by its ID before redirects), or a
// plain Visit with the script alone, then the job a hop of r took up.
func (cs *CollyStorage) report(r *colly.Request, alone *goredis.Script, aloneOp, op string, settle func(context.Context, *queueJob) error) error {
	id := cs.requestKey(r)
	settleJob := func(job *queueJob) error {
		defer cs.notify()
		return cs.persist(context.Background(), op, func(ctx context.Context) error { return settle(ctx, job) })
	}
	var err error
	if job, ok := cs.take(id); ok {
		err = settleJob(job)
	} else {
		err = cs.persist(context.Background(), aloneOp, func(ctx context.Context) error {
			return wrapErr(ctx, cs.q.crawl, aloneOp, alone.Run(ctx, cs.q.client, cs.keysOf(id), cs.q.args(cs.s.now(), id)...).Err())
		})
	}
	if job, ok := cs.takeHop(r, id); ok {
		err = errors.Join(err, settleJob(job))
	}
	return cs.settled(err)
}

// takeHop takes the held job of the URL r ended at (id: r's ID before its
// redirects) if a hop of r took it up.
func (cs *CollyStorage) takeHop(r *colly.Request, id string) (*queueJob, bool) {
	end := requestIDOf(r)
	if v, ok := cs.held.Load(end); end == id || !ok || !v.(*heldJob).isTaken() {
		return nil, false
	}
	return cs.take(end)
}

// settled joins err to ErrStateLost once the crawl's state is found gone.
func (cs *CollyStorage) settled(err error) error {
	if err != nil && !errors.Is(err, ErrStateLost) {
		if l := cs.lost(); l != nil {
			return fmt.Errorf("%w; %w", l, err)
		}
	}
	return err
}

// IsVisited implements storage.Storage as an atomic check-and-set: false
// means the caller has claimed the request.
func (cs *CollyStorage) IsVisited(id uint64) (bool, error) {
	key := idKey(id)
	if v, ok := cs.held.Load(key); ok {
		if v.(*heldJob).ask() {
			return true, nil
		}
		cs.started(key)
		return false, nil
	}
	// A claim of this process not yet settled by Visited: Visited decides.
	if held, visited := cs.claimed.Join(id); held {
		return visited, nil
	}
	var n int
	err := cs.persist(context.Background(), "is visited", func(ctx context.Context) (err error) {
		now := cs.s.now()
		n, err = scriptCollyVisit.Run(ctx, cs.q.client, cs.keysOf(key), cs.q.args(now, key, now.Add(cs.s.VisibilityTimeout).UnixMilli())...).Int()
		return wrapErr(ctx, cs.q.crawl, "is visited", err)
	})
	if err == nil && n != 1 {
		cs.claimed.Add(id)
	}
	return err == nil && n == 1, err
}

// Visited implements storage.Storage: after IsVisited's claim, a second
// caller here told the request was new is told it was visited after all.
// Called alone (a redirect hop Colly did not check) it claims the request.
func (cs *CollyStorage) Visited(id uint64) error {
	claimedHere, lost := cs.claimed.Settle(id)
	v, held := cs.held.Load(idKey(id))
	switch {
	case claimedHere && lost, !claimedHere && held && !v.(*heldJob).take():
		return fmt.Errorf("breakwater/redis: %w", storage.ErrClaimed)
	case claimedHere:
		return nil
	case held:
		cs.started(idKey(id))
		return nil
	}
	visited, err := cs.IsVisited(id)
	if err == nil && !visited {
		cs.claimed.Settle(id)
	}
	return err
}

// heldJob is a job this process claimed and has not reported yet, whose
// URL needs no round trip. A redirect's hop of another request may meet
// it first: the first caller Visited lets through fetches it, every later
// one (the job's own request too) is told it is visited, and the hop's
// outcome settles it.
type heldJob struct {
	job     *queueJob
	started time.Time // when Colly took the request up; zero before (under keep.mu)
	mu      sync.Mutex
	told    int  // callers IsVisited told the URL is new that have not called Visited
	taken   bool // Visited let a caller through: the URL is being fetched
}

// ask is IsVisited of the job's URL: visited once a caller took it up.
func (h *heldJob) ask() (visited bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.taken {
		h.told++
	}
	return h.taken
}

// take is Visited of the job's URL: false if the caller was told the URL
// was new and another caller took it up since.
func (h *heldJob) take() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.told > 0 {
		h.told--
		if h.taken {
			return false
		}
	}
	h.taken = true
	return true
}

// isTaken reports whether a caller took the job up.
func (h *heldJob) isTaken() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.taken
}

// Cookies implements storage.Storage: u's host's cookies, shared by every
// worker; none while Redis is unreachable (logged at debug level).
func (cs *CollyStorage) Cookies(u *url.URL) string {
	ctx, cancel := callContext(context.Background(), cs.s.CallTimeout)
	defer cancel()
	v, err := cs.q.client.HGet(ctx, cs.shards[0][keyCookies], u.Host).Result()
	if err != nil && !errors.Is(err, goredis.Nil) {
		cs.s.Logger.Debug().Str("crawl", cs.q.crawl).Str("host", u.Host).Err(wrapErr(ctx, cs.q.crawl, "cookies", err)).Msg("breakwater/redis: cookies not read")
	}
	return v
}

// SetCookies implements storage.Storage; a failure is logged.
func (cs *CollyStorage) SetCookies(u *url.URL, cookies string) {
	ctx, cancel := callContext(context.Background(), cs.s.CallTimeout)
	defer cancel()
	_, err := cs.q.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, cs.shards[0][keyCookies], u.Host, cookies)
		p.PExpire(ctx, cs.shards[0][keyCookies], cs.s.Retention)
		return nil
	})
	if err != nil {
		cs.s.Logger.Warn().Str("event", "cookies_not_saved").Str("crawl", cs.q.crawl).Str("host", u.Host).
			Err(wrapErr(ctx, cs.q.crawl, "set cookies", err)).Msg("breakwater/redis: cookies not saved")
	}
}

// AddRequest implements queue.Storage: it queues a request Colly
// serialised unless the crawl has seen it, so every worker may add the
// same seeds.
func (cs *CollyStorage) AddRequest(b []byte) error {
	u, id, err := storage.ParseRequest(b)
	job := &queueJob{ID: idKey(id), URL: u, Request: bytes.Clone(b)}
	if err != nil {
		err = fmt.Errorf("%w: %v", ErrInvalidJob, err)
	} else {
		err = cs.q.prepare(job, cs.s.now())
	}
	if err != nil {
		return fmt.Errorf("breakwater/redis: add request on crawl %q: %w", cs.q.crawl, err)
	}
	rec := encodeJob(job)
	var added int
	err = cs.persist(context.Background(), "add request", func(ctx context.Context) (err error) {
		if err := cs.watch(ctx, false); err != nil {
			return err
		}
		now := cs.s.now()
		added, err = scriptCollyAdd.Run(ctx, cs.q.client, cs.keysOf(job.ID), cs.q.args(now, job.ID, now.UnixMilli(), rec)...).Int()
		return wrapErr(ctx, cs.q.crawl, "add request", err)
	})
	if added > 0 {
		cs.notify()
	}
	return err
}

// GetRequest implements queue.Storage: it claims the best ready job,
// waiting (up to Config.PollInterval between tries) while others are
// delayed or in flight; with none left it returns ErrDrained.
func (cs *CollyStorage) GetRequest() ([]byte, error) {
	cs.handed()
	for {
		if cs.closed() {
			return nil, fmt.Errorf("breakwater/redis: get request on crawl %q: the storage was closed", cs.q.crawl)
		}
		var job *queueJob
		token, at := newToken(), -1
		err := cs.persist(context.Background(), "get request", func(ctx context.Context) error {
			if err := cs.watch(ctx, false); err != nil {
				return err
			}
			// A retry keeps token and shard: a lost answer's job is handed out again.
			var err error
			job, err = cs.q.claim(ctx, token, &at)
			return err
		})
		if err == nil {
			cs.hold(job)
			return job.Request, nil
		}
		var empty *emptyError
		if !errors.As(err, &empty) {
			return nil, err
		}
		if empty.Next.IsZero() || cs.beyondHorizon(empty) { // drained
			if err := cs.persist(context.Background(), "get request", func(ctx context.Context) error { return cs.watch(ctx, true) }); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("breakwater/redis: get request on crawl %q: %w", cs.q.crawl, ErrDrained)
		}
		t := time.NewTimer(min(cs.s.PollInterval, max(empty.Next.Sub(cs.s.now()), time.Millisecond)))
		select {
		case <-cs.wake:
		case <-t.C:
		case <-cs.done: // closed: the loop's top returns
		}
		t.Stop()
	}
}

// QueueSize implements queue.Storage: the jobs not finished anywhere in
// the crawl, dead letters aside. Before it reports 0 it checks that the
// crawl's state is still there.
func (cs *CollyStorage) QueueSize() (int, error) {
	cs.handed()
	if cs.closed() {
		return 0, nil
	}
	var n int64
	err := cs.persist(context.Background(), "queue size", func(ctx context.Context) error {
		if err := cs.watch(ctx, false); err != nil {
			return err
		}
		var err error
		if n, err = cs.pending(ctx); err != nil || n > 0 {
			return err
		}
		return cs.watch(ctx, true) // the end of the crawl, or of its state
	})
	return int(n), err
}

// pending counts the jobs ready, in flight and delayed (within the wait
// horizon, if any: Ready counts the delayed jobs due within it).
func (cs *CollyStorage) pending(ctx context.Context) (int64, error) {
	st, err := cs.q.stats(ctx, cs.s.now().Add(max(cs.s.WaitHorizon, 0)))
	if cs.s.WaitHorizon < 0 {
		return st.Pending(), err
	}
	return st.Ready + st.InFlight, err
}

// beyondHorizon reports whether all that is left waits beyond the horizon.
func (cs *CollyStorage) beyondHorizon(empty *emptyError) bool {
	if cs.s.WaitHorizon < 0 || !empty.Next.After(cs.s.now().Add(cs.s.WaitHorizon)) {
		return false
	}
	n, err := cs.pending(context.Background())
	return err == nil && n == 0
}

// persist runs call, retrying with a backoff while Redis is unreachable,
// for up to the max outage (or until Close).
func (cs *CollyStorage) persist(ctx context.Context, op string, call func(context.Context) error) error {
	began := time.Now()
	joined := false
	for tries := 1; ; tries++ {
		started := cs.s.now()
		err := call(ctx)
		if err != nil && !joined && strings.Contains(err.Error(), "BWLOST") {
			// The run marker guard refused: the marker is gone or marks the
			// crawl lost. Join the run if this worker never had, else the
			// state was lost.
			if werr := cs.watch(ctx, true); werr != nil {
				return werr
			}
			joined = true
			err = call(ctx)
		}
		for stale := 0; stale < staleRetries && isUnavailable(err) && staleConn(err); stale++ {
			cs.suspect()    // a restart: Redis may have come back empty
			err = call(ctx) // on another connection: the pool may hold several from before a restart
		}
		if !isUnavailable(err) {
			cs.link.ok(started, cs.s.now())
			return err
		}
		cs.suspect() // Redis may come back empty
		cs.link.failed(started, cs.s.now(), err, false)
		if cs.s.MaxOutage >= 0 && time.Since(began) >= cs.s.MaxOutage {
			return fmt.Errorf("breakwater/redis: %s: Redis unreachable for %v, longer than the max outage (Config.MaxOutage): %w", op, time.Since(began).Round(time.Millisecond), err)
		}
		t := time.NewTimer(halfJitter(cs.s.ReconnectBase, cs.s.ReconnectCap, tries, cs.q.float64()))
		select {
		case <-t.C:
		case <-cs.done:
			t.Stop()
			return err
		}
	}
}

func (cs *CollyStorage) closed() bool {
	select {
	case <-cs.done:
		return true
	default:
		return false
	}
}

// notify wakes a GetRequest waiting for a job.
func (cs *CollyStorage) notify() {
	select {
	case cs.wake <- struct{}{}:
	default:
	}
}

// requestKey returns r's ID as OnRequest saw it (before any redirect).
func (cs *CollyStorage) requestKey(r *colly.Request) string {
	if v, ok := cs.reqs.LoadAndDelete(r); ok {
		return v.(string)
	}
	return requestIDOf(r)
}

// requestIDOf is Colly's ID of r; the body is read only if it can be
// read again.
func requestIDOf(r *colly.Request) string {
	var body []byte
	if rs, ok := r.Body.(io.ReadSeeker); ok && rs != nil {
		if pos, err := rs.Seek(0, io.SeekCurrent); err == nil {
			if _, err := rs.Seek(0, io.SeekStart); err == nil {
				body, _ = io.ReadAll(rs)
			}
			_, _ = rs.Seek(pos, io.SeekStart)
		}
	}
	_, id, _ := storage.Identify(r.URL.String(), body)
	return idKey(id)
}
