package redis

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
)

// The queue under CollyStorage, its jobs, and a few inspection
// helpers are unexported: the package's users reach them through
// CollyStorage (Stats, DeadLetters). The tests drive them directly, under
// the names they had.

type (
	Queue            = jobQueue
	Job              = queueJob
	EmptyError       = emptyError
	UnavailableError = unavailableError
	Checkpoint       = checkpointStore
	BreakerStore     = breakerStore
)

var (
	NewQueue  = newQueue
	RequestID = requestID
	WithRand  = withRand
)

// Stats counts the queue's jobs in one round trip.
func (q *jobQueue) Stats(ctx context.Context) (Stats, error) { return q.stats(ctx, q.s.now()) }

// Queue returns the queue under the storage.
func (cs *CollyStorage) Queue() *Queue { return cs.q }

// Keys returns the storage's Redis keys: the queue's, then visited,
// cookies and the run marker; shard after shard with Config.Shards.
func (cs *CollyStorage) Keys() []string {
	var out []string
	for _, k := range cs.shards {
		out = append(out, k...)
	}
	return out
}

// Holds reports whether this process holds the job of the request id
// (claimed, not yet reported).
func (cs *CollyStorage) Holds(id uint64) bool {
	_, ok := cs.held.Load(idKey(id))
	return ok
}

// withRand returns c that also sets the random source of the backoff
// jitter; the queue serialises its use. Default: math/rand/v2's global source.
func withRand(c Config, r *rand.Rand) Config {
	set := c.set
	c.set = func(s *settings) {
		if set != nil {
			set(s)
		}
		if r == nil {
			s.bad("rand: nil")
		}
		s.rand = r
	}
	return c
}

// Lost is the storage's verdict on the crawl's state, without a round trip.
func (cs *CollyStorage) Lost() error { return cs.lost() }

// Keys returns the Redis keys of domain's circuit.
func (bs *BreakerStore) Keys(domain string) []string { return bs.domainKeys(domain) }

var (
	ErrEmpty      = errors.New("no job ready")
	ErrNotClaimed = errNotClaimed
)

// Drained reports whether no job is delayed or in flight.
func (e *emptyError) Drained() bool { return e.Next.IsZero() }

// Is makes errors.Is(err, ErrEmpty) true.
func (e *emptyError) Is(target error) bool { return target == ErrEmpty }

// Keys returns the checkpoint's Redis keys.
func (cp *checkpointStore) Keys() []string { return cp.keys }

// The queue's own API, which CollyStorage does not use (it runs the queue
// through its own scripts): the tests drive the queue's scripts with it.
var (
	scriptEnqueue   = after(guarded, "enqueue")
	scriptAck       = after(guarded, "ack")
	scriptReclaim   = after(guarded, "reclaim")
	scriptRetryDead = after(guarded, "retrydead")
)

// Keys returns the Redis keys of the queue, for inspection and cleanup:
// ready, delayed, inflight, dead, jobs, leases; shard after shard with
// Config.Shards.
func (q *jobQueue) Keys() []string {
	var out []string
	for _, k := range q.shards {
		out = append(out, k...)
	}
	return out
}

// Enqueue adds jobs to the queue and reports how many were new. A job whose
// ID is already in the crawl (queued, in flight or dead) is skipped. A job
// with NotBefore in the future waits until then. Enqueue fills in each job's
// ID, Domain, MaxAttempts and EnqueuedAt when zero; it checks every job
// before writing any, and rejects bad ones with ErrInvalidJob.
func (q *jobQueue) Enqueue(ctx context.Context, jobs ...*queueJob) (int, error) {
	now := q.s.now()
	for i, j := range jobs {
		err := check(j)
		if err == nil {
			err = q.prepare(j, now)
		}
		if err != nil {
			return 0, fmt.Errorf("breakwater/redis: enqueue on crawl %q: job %d: %w", q.crawl, i, err)
		}
	}
	ctx, cancel := callContext(ctx, q.s.CallTimeout)
	defer cancel()
	added := 0
	for shard, jobs := range q.byShard(jobs) {
		n, err := q.enqueue(ctx, now, q.shards[shard], jobs)
		added += n
		if err != nil {
			return added, err
		}
	}
	return added, nil
}

// check is the part of prepare that only jobs not from AddRequest need.
func check(j *queueJob) error {
	if j == nil {
		return fmt.Errorf("%w: nil", ErrInvalidJob)
	}
	if j.Attempts < 0 || j.MaxAttempts < 0 {
		return fmt.Errorf("%w: attempts %d, max attempts %d: must not be negative", ErrInvalidJob, j.Attempts, j.MaxAttempts)
	}
	if len(j.ID) > 1024 {
		return fmt.Errorf("%w: ID of %d bytes: at most 1024", ErrInvalidJob, len(j.ID))
	}
	if j.ID == "" {
		j.ID = crand.Text()
	}
	j.NotBefore, j.FailedAt, j.LastError = ms(j.NotBefore), ms(j.FailedAt), truncateError(j.LastError)
	return nil
}

// byShard groups jobs by the shard of their ID, keeping their order.
func (q *jobQueue) byShard(jobs []*queueJob) [][]*queueJob {
	if len(q.shards) == 1 {
		return [][]*queueJob{jobs}
	}
	out := make([][]*queueJob, len(q.shards))
	for _, j := range jobs {
		i := shardOf(j.ID, len(q.shards))
		out[i] = append(out[i], j)
	}
	return out
}

// enqueueBatch is how many jobs one Enqueue round trip carries.
const enqueueBatch = 256

// enqueue adds jobs of one shard, enqueueBatch at a time.
func (q *jobQueue) enqueue(ctx context.Context, now time.Time, keys []string, jobs []*queueJob) (int, error) {
	added := 0
	for start := 0; start < len(jobs); start += enqueueBatch {
		batch := jobs[start:min(start+enqueueBatch, len(jobs))]
		args := q.args(now)
		for _, j := range batch {
			rec := encodeJob(j)
			eligible := now
			if j.NotBefore.After(now) {
				eligible = j.NotBefore
			}
			args = append(args, j.ID, eligible.UnixMilli(), rec)
		}
		n, err := scriptEnqueue.Run(ctx, q.client, keys, args...).Int()
		if err != nil {
			return added, wrapErr(ctx, q.crawl, "enqueue", err)
		}
		added += n
	}
	return added, nil
}

// Claim leases the best ready job to the caller. In the same atomic step it
// takes back jobs whose lease expired and makes due delayed jobs ready, so
// a crawl needs no separate janitor. The best job is the one with the lowest
// eligible time; two workers never get the same job.
//
// When nothing is ready Claim returns an *EmptyError (errors.Is ErrEmpty)
// saying when the next job may be; a zero Next means the crawl's queue is
// drained. The caller must end the lease with Ack, Fail or Park, or Extend
// it, within the visibility timeout.
func (q *jobQueue) Claim(ctx context.Context) (*queueJob, error) {
	at := -1
	return q.claim(ctx, newToken(), &at)
}

// Ack marks a claimed job done and removes it from the crawl. A job whose
// lease expired and was taken back is still completed as long as nobody has
// claimed or rescheduled it since; otherwise Ack returns ErrLeaseLost and
// changes nothing (the other worker will finish it: delivery is at least
// once).
func (q *jobQueue) Ack(ctx context.Context, job *queueJob) error {
	if err := q.claimed("ack", job); err != nil {
		return err
	}
	ctx, cancel := callContext(ctx, q.s.CallTimeout)
	defer cancel()
	n, err := scriptAck.Run(ctx, q.client, q.keysOf(job.ID), q.args(q.s.now(), job.ID, job.lease)...).Int()
	if err != nil {
		return wrapErr(ctx, q.crawl, "ack", err)
	}
	if err := q.status("ack", job, int64(n)); err != nil {
		return err
	}
	job.lease, job.LeaseUntil = "", time.Time{}
	return nil
}

// Extend renews a claimed job's lease for another visibility timeout from
// now. Call it from long jobs before job.LeaseUntil. It returns
// ErrLeaseLost if the lease already expired and the job was taken back.
func (q *jobQueue) Extend(ctx context.Context, job *queueJob) error {
	if err := q.claimed("extend", job); err != nil {
		return err
	}
	now := q.s.now()
	deadline := ms(now.Add(q.s.VisibilityTimeout))
	ctx, cancel := callContext(ctx, q.s.CallTimeout)
	defer cancel()
	n, err := scriptExtend.Run(ctx, q.client, q.keysOf(job.ID), q.args(now, job.ID, job.lease, deadline.UnixMilli())...).Int()
	if err != nil {
		return wrapErr(ctx, q.crawl, "extend", err)
	}
	if err := q.status("extend", job, int64(n)); err != nil {
		return err
	}
	job.LeaseUntil = deadline
	return nil
}

// Reclaim takes back every job whose lease has expired, spending one of its
// attempts (or burying it if that was its last), and reports how many it
// took back. Claim already does this as it goes; call Reclaim when no
// worker is claiming, for example from a supervisor.
func (q *jobQueue) Reclaim(ctx context.Context) (int, error) {
	ctx, cancel := callContext(ctx, q.s.CallTimeout)
	defer cancel()
	total := 0
	for _, keys := range q.shards {
		n, err := q.reclaim(ctx, keys)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// reclaim takes back the expired leases of one shard.
func (q *jobQueue) reclaim(ctx context.Context, keys []string) (int, error) {
	total := 0
	for {
		res, err := scriptReclaim.Run(ctx, q.client, keys, q.args(q.s.now(), reclaimBatch, q.reason)...).Slice()
		if err != nil {
			return total, wrapErr(ctx, q.crawl, "reclaim", err)
		}
		if len(res) != 3 {
			return total, wrapErr(ctx, q.crawl, "reclaim", fmt.Errorf("%w: reclaim script answered %d values, want 3", ErrCorrupt, len(res)))
		}
		n := int(toInt(res[0]))
		q.logReclaim(int64(n), toInt(res[1]), toInt(res[2]))
		total += n
		if n < reclaimBatch {
			return total, nil
		}
	}
}

// RetryDead gives the dead letter id a fresh set of attempts and makes it
// ready now; its LastError is kept. It returns ErrUnknownJob if id is not a
// dead letter.
func (q *jobQueue) RetryDead(ctx context.Context, id string) error {
	ctx, cancel := callContext(ctx, q.s.CallTimeout)
	defer cancel()
	n, err := scriptRetryDead.Run(ctx, q.client, q.keysOf(id), q.args(q.s.now(), id)...).Int()
	if err != nil {
		return wrapErr(ctx, q.crawl, "retry dead letter", err)
	}
	if n != 1 {
		return fmt.Errorf("breakwater/redis: retry dead letter on crawl %q: %w: %q is not a dead letter", q.crawl, ErrUnknownJob, id)
	}
	return nil
}

// requestID is the ID of a request for raw with body (storage.Identify's).
func requestID(raw string, body []byte) uint64 {
	_, id, _ := storage.Identify(raw, body)
	return id
}
