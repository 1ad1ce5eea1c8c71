package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// jobQueue is one crawl's job queue in Redis, shared by every worker and
// safe for concurrent use; each call is one atomic Lua round trip.
type jobQueue struct {
	client goredis.UniversalClient
	crawl  string
	shards [][]string // each shard's six keys (one shard unless Config.Shards)
	next   atomic.Uint32
	s      settings
	reason string // LastError of a job whose lease expired
	randMu sync.Mutex
}

// The most delayed jobs a claim promotes and expired leases it takes back.
const (
	promoteBatch = 1000
	reclaimBatch = 100
)

// newQueue returns the queue of the crawl crawlID on client. It does not
// contact Redis; bad options are reported wrapped in ErrInvalidConfig.
func newQueue(client goredis.UniversalClient, crawlID string, c Config) (*jobQueue, error) {
	s, err := build(client, crawlID, c)
	if err != nil {
		return nil, err
	}
	q := &jobQueue{client: client, crawl: crawlID, s: s,
		reason: fmt.Sprintf("lease expired: not acked, failed or parked within the visibility timeout (%v); the worker died, hung or was too slow (call Extend for long jobs)", s.VisibilityTimeout),
	}
	for _, p := range shardPrefixes(s.Namespace, crawlID, s.Shards) {
		q.shards = append(q.shards, queueKeys(p))
	}
	q.next.Store(rand.Uint32()) // workers start their rounds on different shards
	return q, nil
}

// keysOf returns the keys of the shard that holds the job id.
func (q *jobQueue) keysOf(id string) []string { return q.shards[shardOf(id, len(q.shards))] }

// prepare checks a job and fills in its defaults.
func (q *jobQueue) prepare(j *queueJob, now time.Time) error {
	u, err := url.Parse(j.URL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("%w: URL %q is not an absolute URL with a host", ErrInvalidJob, j.URL)
	}
	j.Domain = strings.ToLower(cmp.Or(j.Domain, u.Host))
	j.MaxAttempts = cmp.Or(j.MaxAttempts, q.s.MaxAttempts)
	if j.EnqueuedAt.IsZero() {
		j.EnqueuedAt = now
	}
	j.EnqueuedAt = ms(j.EnqueuedAt)
	return nil
}

func newToken() string { return strconv.FormatUint(rand.Uint64(), 36) }

// claim leases a job with token from the shards in turn from *at (round
// robin when < 0), leaving in *at the shard asked last: asked again with
// the same token, it hands out the same job (a lost answer).
func (q *jobQueue) claim(ctx context.Context, token string, at *int) (*queueJob, error) {
	n := len(q.shards)
	if *at < 0 || *at >= n {
		*at = int(q.next.Add(1) % uint32(n))
	}
	start := *at
	var empty *emptyError
	for i := range n {
		*at = (start + i) % n
		job, err := q.claimShard(ctx, q.shards[*at], token)
		var e *emptyError
		if !errors.As(err, &e) {
			return job, err
		}
		if empty == nil || (!e.Next.IsZero() && (empty.Next.IsZero() || e.Next.Before(empty.Next))) {
			empty = e
		}
	}
	return nil, empty
}

// claimShard runs the claim script on one shard's keys.
func (q *jobQueue) claimShard(ctx context.Context, keys []string, token string) (*queueJob, error) {
	now := q.s.now()
	deadline := ms(now.Add(q.s.VisibilityTimeout))
	ctx, cancel := callContext(ctx, q.s.CallTimeout)
	defer cancel()
	res, err := scriptClaim.Run(ctx, q.client, keys, q.args(now,
		deadline.UnixMilli(), token, promoteBatch, reclaimBatch, q.reason)...).Slice()
	if err == nil && len(res) != 6 {
		err = fmt.Errorf("%w: claim script answered %d values, want 6", ErrCorrupt, len(res))
	}
	if err != nil {
		return nil, wrapErr(ctx, q.crawl, "claim", err)
	}
	q.logReclaim(toInt(res[3]), toInt(res[4]), toInt(res[5]))
	if toInt(res[0]) != 1 {
		e := &emptyError{}
		for _, v := range res[1:3] {
			if t := toInt(v); t >= 0 && (e.Next.IsZero() || time.UnixMilli(t).Before(e.Next)) {
				e.Next = time.UnixMilli(t)
			}
		}
		return nil, e
	}
	raw, _ := res[2].(string)
	job, err := decodeJob(raw)
	if err != nil {
		return nil, wrapErr(ctx, q.crawl, "claim", err)
	}
	job.lease, job.LeaseUntil = token, deadline
	return job, nil
}

// Fail records a failed attempt of a claimed job: a retry after a
// full-jitter exponential backoff, or the dead letters at MaxAttempts.
func (q *jobQueue) Fail(ctx context.Context, job *queueJob, cause error) error {
	if err := q.claimed("fail", job); err != nil {
		return err
	}
	now := ms(q.s.now())
	next := *job
	next.Attempts++
	next.LastError = "failed without an error"
	if cause != nil {
		next.LastError = truncateError(cause.Error())
	}
	next.FailedAt, next.NotBefore = now, now
	bury := next.Exhausted()
	if !bury {
		next.NotBefore = ms(now.Add(backoffDelay(q.s.BackoffBase, q.s.BackoffCap, next.Attempts, q.float64())))
	}
	if err := q.requeue(ctx, "fail", job, &next, bury); err != nil {
		return err
	}
	if bury {
		q.s.Logger.Warn().Str("crawl", q.crawl).Str("job", next.ID).Str("url", next.URL).Str("domain", next.Domain).
			Int("attempts", next.Attempts).Str("error", next.LastError).Msg("job dead-lettered: attempts exhausted")
	}
	return nil
}

// Park puts a claimed job back without spending an attempt, to be claimed
// again no earlier than until: for a domain refusing work.
func (q *jobQueue) Park(ctx context.Context, job *queueJob, until time.Time) error {
	if err := q.claimed("park", job); err != nil {
		return err
	}
	now := ms(q.s.now())
	next := *job
	next.NotBefore = now
	if until.After(now) {
		next.NotBefore = ms(until)
	}
	return q.requeue(ctx, "park", job, &next, false)
}

func (q *jobQueue) requeue(ctx context.Context, op string, job, next *queueJob, bury bool) error {
	rec := encodeJob(next)
	ctx, cancel := callContext(ctx, q.s.CallTimeout)
	defer cancel()
	res, err := scriptRequeue.Run(ctx, q.client, q.keysOf(job.ID), q.args(q.s.now(),
		job.ID, job.lease, rec, next.NotBefore.UnixMilli(), flag(bury))...).Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("%w: requeue script answered %d values, want 2", ErrCorrupt, len(res))
	}
	if err != nil {
		return wrapErr(ctx, q.crawl, op, err)
	}
	if err := q.status(op, job, toInt(res[0])); err != nil {
		return err
	}
	q.logReclaim(0, 0, toInt(res[1]))
	*job = *next
	job.lease, job.LeaseUntil = "", time.Time{}
	return nil
}

// Dead returns up to limit (≤ 0: 100) dead letters, newest first.
func (q *jobQueue) Dead(ctx context.Context, limit int) ([]*queueJob, error) {
	if limit <= 0 {
		limit = 100
	}
	ctx, cancel := callContext(ctx, q.s.CallTimeout)
	defer cancel()
	var out []*queueJob
	for _, keys := range q.shards {
		res, err := scriptDead.Run(ctx, q.client, keys, q.args(q.s.now(), 0, limit-1)...).Slice()
		for i := 0; err == nil && i+2 < len(res); i += 3 {
			raw, _ := res[i+2].(string)
			var j *queueJob
			if j, err = decodeJob(raw); err == nil {
				out = append(out, j)
			}
		}
		if err != nil {
			return out, wrapErr(ctx, q.crawl, "dead", err)
		}
	}
	if len(q.shards) > 1 { // newest first across the shards
		slices.SortStableFunc(out, func(a, b *queueJob) int { return b.FailedAt.Compare(a.FailedAt) })
		out = out[:min(len(out), limit)]
	}
	return out, nil
}

// Stats counts the crawl's jobs by where they are.
type Stats struct {
	Ready    int64 // claimable now (including delayed jobs already due)
	Delayed  int64 // waiting for their NotBefore
	InFlight int64 // leased to a worker (including expired leases not yet taken back)
	Dead     int64 // dead letters
}

// Pending is the work not yet finished: ready, delayed and in flight.
func (s Stats) Pending() int64 { return s.Ready + s.Delayed + s.InFlight }

// stats counts the queue's jobs (the delayed ones due by dueBy as ready).
func (q *jobQueue) stats(ctx context.Context, dueBy time.Time) (Stats, error) {
	ctx, cancel := callContext(ctx, q.s.CallTimeout)
	defer cancel()
	now := strconv.FormatInt(dueBy.UnixMilli(), 10)
	cmds, err := q.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, keys := range q.shards { // per shard: ready, due, delayed, in flight, dead
			p.ZCard(ctx, keys[keyReady])
			p.ZCount(ctx, keys[keyDelayed], "-inf", now)
			p.ZCard(ctx, keys[keyDelayed])
			p.ZCard(ctx, keys[keyInflight])
			p.ZCard(ctx, keys[keyDead])
		}
		return nil
	})
	if err != nil {
		return Stats{}, wrapErr(ctx, q.crawl, "stats", err)
	}
	var st Stats
	for c := range slices.Chunk(cmds, 5) {
		n := func(i int) int64 { return c[i].(*goredis.IntCmd).Val() }
		st.Ready += n(0) + n(1)
		st.Delayed += n(2) - n(1)
		st.InFlight += n(3)
		st.Dead += n(4)
	}
	return st, nil
}

// args builds the ARGV every script starts with (lua/prelude.lua).
func (q *jobQueue) args(now time.Time, extra ...any) []any {
	return append([]any{now.UnixMilli(), q.s.Retention.Milliseconds(), q.s.DeadLetterLimit}, extra...)
}

func (q *jobQueue) float64() float64 {
	if q.s.rand == nil {
		return rand.Float64()
	}
	q.randMu.Lock()
	defer q.randMu.Unlock()
	return q.s.rand.Float64()
}

// callContext bounds ctx by timeout (none when negative).
func callContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	if dl, ok := ctx.Deadline(); timeout < 0 || ok && time.Until(dl) <= timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, timeout)
}

func (q *jobQueue) claimed(op string, job *queueJob) error {
	if job == nil || job.lease == "" {
		return fmt.Errorf("breakwater/redis: %s on crawl %q: %w (pass the *Job that Claim returned)", op, q.crawl, errNotClaimed)
	}
	return nil
}

// status turns a script's holder status into an error.
func (q *jobQueue) status(op string, job *queueJob, n int64) error {
	switch n {
	case 1:
		return nil
	case -1:
		return fmt.Errorf("breakwater/redis: %s %s on crawl %q: %w; another worker may be running it", op, job, q.crawl, ErrLeaseLost)
	default:
		return fmt.Errorf("breakwater/redis: %s %s on crawl %q: %w: it was acked already or expired with the crawl's retention", op, job, q.crawl, ErrUnknownJob)
	}
}

func (q *jobQueue) logReclaim(reclaimed, buried, trimmed int64) {
	if reclaimed > 0 {
		q.s.Logger.Warn().Str("crawl", q.crawl).Int64("reclaimed", reclaimed).Int64("dead_lettered", buried).
			Dur("visibility_timeout", q.s.VisibilityTimeout).Msg("leases expired: jobs taken back from workers that did not answer")
	}
	if trimmed > 0 {
		q.s.Logger.Warn().Str("crawl", q.crawl).Int64("dropped", trimmed).Int("limit", q.s.DeadLetterLimit).
			Msg("dead letters over the limit: oldest dropped")
	}
}

// ms truncates t to the millisecond, the queue's resolution.
func ms(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMilli(t.UnixMilli())
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}
