package redis

import (
	"context"
	"errors"
	"sync"
	"time"
)

// keeper extends, every third of the visibility timeout, the lease of each
// job under way here (for at most Config.MaxHold): a lease bounds how long
// a dead worker keeps its jobs, not how long a live one may wait.
type keeper struct {
	mu      sync.Mutex
	jobs    map[string]*heldJob // job ID → the job, while its lease is this process's
	waiting string              // the job GetRequest handed out last, until the queue asks again
	running bool                // the keeper goroutine runs
}

// hold records that this process claimed job and starts the keeper.
func (cs *CollyStorage) hold(job *queueJob) {
	h := &heldJob{job: job}
	cs.held.Store(job.ID, h)
	k := &cs.keep
	k.mu.Lock()
	defer k.mu.Unlock()
	k.jobs[job.ID] = h
	k.waiting = job.ID
	cs.startKeeperLocked()
}

// startKeeperLocked starts the keeper unless it runs; k.mu is held.
func (cs *CollyStorage) startKeeperLocked() {
	if !cs.keep.running {
		cs.keep.running = true
		go cs.keepLeases()
	}
}

// take removes the job id from this process's hold.
func (cs *CollyStorage) take(id string) (*queueJob, bool) {
	v, ok := cs.held.LoadAndDelete(id)
	if !ok {
		return nil, false
	}
	k := &cs.keep
	k.mu.Lock()
	delete(k.jobs, id)
	if k.waiting == id {
		k.waiting = ""
	}
	k.mu.Unlock()
	return v.(*heldJob).job, true
}

// started records that Colly took up the request of the held job id.
func (cs *CollyStorage) started(id string) {
	k := &cs.keep
	k.mu.Lock()
	defer k.mu.Unlock()
	if j := k.jobs[id]; j != nil && j.started.IsZero() {
		j.started = time.Now()
		cs.startKeeperLocked()
	}
}

// handed records that Colly's queue asks again: the job handed out last
// is a thread's now, or was dropped.
func (cs *CollyStorage) handed() {
	k := &cs.keep
	k.mu.Lock()
	k.waiting = ""
	k.mu.Unlock()
}

// keepLeases extends the leases under way until none is.
func (cs *CollyStorage) keepLeases() {
	t := time.NewTicker(max(cs.s.VisibilityTimeout/3, time.Millisecond))
	defer t.Stop()
	k := &cs.keep
	for range t.C {
		k.mu.Lock()
		due := map[string]string{}
		for id, j := range k.jobs {
			busy := !j.started.IsZero() && (cs.s.MaxHold < 0 || time.Since(j.started) < cs.s.MaxHold)
			if busy || id == k.waiting {
				due[id] = j.job.lease
			}
		}
		if len(due) == 0 {
			k.running = false
			k.mu.Unlock()
			return
		}
		k.mu.Unlock()
		for id, token := range due {
			cs.extend(id, token)
		}
	}
}

// extend pushes the lease of the job id one visibility timeout ahead. A
// lost lease or unknown job is let go and logged.
func (cs *CollyStorage) extend(id, token string) {
	ctx, cancel := callContext(context.Background(), cs.q.s.CallTimeout)
	defer cancel()
	now := cs.s.now()
	n, err := scriptExtend.Run(ctx, cs.q.client, cs.q.keysOf(id), cs.q.args(now, id, token, ms(now.Add(cs.s.VisibilityTimeout)).UnixMilli())...).Int()
	if err != nil {
		cs.s.Logger.Debug().Str("crawl", cs.q.crawl).Str("job", id).Err(wrapErr(ctx, cs.q.crawl, "extend", err)).
			Msg("breakwater/redis: a lease could not be extended; trying again at the next tick")
		return
	}
	if n == 1 {
		return
	}
	k := &cs.keep
	k.mu.Lock()
	j := k.jobs[id]
	mine := j != nil && j.job.lease == token
	if mine {
		delete(k.jobs, id) // the outcome still settles it (and finds it taken)
	}
	k.mu.Unlock()
	if !mine {
		return // settled meanwhile
	}
	if n == 0 {
		cs.s.Logger.Warn().Str("event", "lease_not_extended").Str("crawl", cs.q.crawl).Str("job", id).
			Msg("breakwater/redis: a job this worker holds is no longer in the crawl's queue")
		_ = cs.watch(context.Background(), true)
		return
	}
	cs.s.Logger.Warn().Str("event", "lease_lost").Str("crawl", cs.q.crawl).Str("job", id).
		Err(errors.New("the lease expired before it could be extended (Redis unreachable for longer than the visibility timeout?)")).
		Msg("breakwater/redis: another worker may fetch this job too")
}
