package redis

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ErrStateLost means the crawl's shared state in Redis is gone from under
// a running worker (Redis restarted without persistence, was flushed, or
// evicted the keys), so the crawl cannot end complete: every call returns
// it from then on. Run Redis with appendonly yes, and start the crawl again.
var ErrStateLost = errors.New("the crawl's shared state in Redis was lost")

// runWatch is what a CollyStorage knows of the crawl's run marker.
type runWatch struct {
	mu      sync.Mutex
	id      string    // the run id joined; "" before the first call
	checked time.Time // when the marker was last seen
	recheck bool      // Redis failed a call since: look again at once
	lost    error     // wraps ErrStateLost once found; sticky
}

// watch joins the crawl's run on the first call (writing the marker if
// there is none), then checks, when forced or due (a third of the lease,
// at most 5 s), that the marker is the one joined; gone or replaced, the
// state is lost (ErrStateLost, sticky).
func (cs *CollyStorage) watch(ctx context.Context, force bool) error {
	w := &cs.run
	w.mu.Lock()
	joined, lost := w.id, w.lost
	due := force || w.recheck || time.Since(w.checked) >= max(min(cs.s.VisibilityTimeout/3, 5*time.Second), time.Millisecond)
	w.mu.Unlock()
	if lost != nil {
		return lost
	}
	if joined != "" && !due {
		return nil
	}
	ctx, cancel := callContext(ctx, cs.q.s.CallTimeout)
	defer cancel()
	// Every shard has a copy of the marker.
	run, odd, oddKey := crand.Text(), "", ""
	now := cs.s.now()
	for i, keys := range cs.shards {
		v, err := scriptCollyRun.Run(ctx, cs.q.client, keys, cs.q.args(now, run, flag(joined == ""))...).Text()
		if err = ignoreNil(err); err != nil {
			return wrapErr(ctx, cs.q.crawl, "check the crawl's run", err)
		}
		if i == 0 {
			run = v
		} else if v != run && oddKey == "" {
			odd, oddKey = v, keys[keyRun]
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	key, found := cs.shards[0][keyRun], run
	if oddKey != "" && (w.id == "" || run == w.id) {
		key, found = oddKey, odd
	}
	what := "is gone"
	if found != "" {
		what = "names another run"
	}
	switch {
	case w.lost != nil:
		return w.lost
	case strings.HasPrefix(found, tombstone):
		w.lost = fmt.Errorf("breakwater/redis: crawl %q: %w: a worker found it lost (%s) and marked it so in %s: what the crawl had queued and done is gone, and a worker joining it now would fetch again, from its start URLs, what the lost run did; delete the crawl (DeleteCrawl, productcrawl --redis-purge) to start it again, with Redis persistence on (appendonly yes)",
			cs.q.crawl, ErrStateLost, strings.TrimPrefix(found, tombstone), key)
	case w.id == "" && oddKey == "":
		w.id = run
	case run != w.id || oddKey != "":
		w.lost = fmt.Errorf("breakwater/redis: crawl %q: %w: its run marker %s %s (Redis restarted without persistence, was flushed or evicted the crawl's keys), so what the crawl had queued and done is gone and this worker's results are incomplete: run Redis with persistence (appendonly yes), delete the crawl (DeleteCrawl, productcrawl --redis-purge) and start it again",
			cs.q.crawl, ErrStateLost, key, what)
		defer cs.markLost(ctx, fmt.Sprintf("its run marker %s %s at %s", key, what, now.UTC().Format(time.RFC3339)))
	}
	if w.lost != nil {
		cs.s.Logger.Error().Str("event", "redis_state_lost").Str("crawl", cs.q.crawl).Err(w.lost).
			Msg("breakwater/redis: the crawl's shared state in Redis was lost; this worker stops")
		return w.lost
	}
	w.checked, w.recheck = time.Now(), false
	return nil
}

// tombstone starts the run marker of a crawl a worker found lost.
const tombstone = "~lost: "

// markLost writes a tombstone into every shard's run marker, so that a
// worker joining afterwards is refused and one that joined the emptied
// Redis finds its run replaced. Best effort.
func (cs *CollyStorage) markLost(ctx context.Context, why string) {
	for _, keys := range cs.shards {
		if err := cs.q.client.Set(ctx, keys[keyRun], tombstone+why, cs.s.Retention).Err(); err != nil {
			cs.s.Logger.Warn().Str("crawl", cs.q.crawl).Err(wrapErr(ctx, cs.q.crawl, "mark the crawl lost", err)).
				Msg("breakwater/redis: the crawl could not be marked lost; a worker joining it now would start it afresh")
			return
		}
	}
}

// suspect makes the next watch look at the marker at once.
func (cs *CollyStorage) suspect() {
	cs.run.mu.Lock()
	cs.run.recheck = true
	cs.run.mu.Unlock()
}

// Check asks Redis whether the crawl's shared state is still there: the
// run marker this worker joined is unchanged. It returns an error
// wrapping ErrStateLost when it was lost, nil when it is there or this
// worker never joined, and an error wrapping ErrUnavailable when Redis
// cannot be asked. For the end of a run, to decide how it ended.
func (cs *CollyStorage) Check(ctx context.Context) error {
	cs.run.mu.Lock()
	joined := cs.run.id != ""
	cs.run.mu.Unlock()
	if !joined { // lost all the same if refused at its join: the crawl was marked lost
		return cs.lost()
	}
	return cs.watch(ctx, true) // the loss found already, if any, without a round trip
}

// lost returns the ErrStateLost error once found, asking Redis nothing.
func (cs *CollyStorage) lost() error {
	cs.run.mu.Lock()
	defer cs.run.mu.Unlock()
	return cs.run.lost
}
