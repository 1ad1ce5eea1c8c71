package checkpoint

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/storage"
)

// errQueueEmpty is GetRequest's answer when nothing is queued.
var errQueueEmpty = errors.New("checkpoint: the queue is empty")

// unfinished are the states a resume takes up again.
var unfinished = []storage.State{storage.Pending, storage.InFlight, storage.Failed, storage.Parked}

// loadLocked fills the frontier (startLocked, once) with what earlier runs left
// unfinished and eligible now (see Resume). A failed URL with no attempts
// left (MaxAttempts was lowered) is dead.
func (cp *Checkpoint) loadLocked() {
	if cp.failed() {
		return
	}
	now := cp.now()
	var fix []storage.Record
	_ = cp.flush(true) // an error stops the scan below
	err := cp.store.Scan(func(r storage.Record) error {
		switch {
		case r.State == storage.InFlight:
			r.Attempts = max(r.Attempts-1, 0)
			r.State = storage.Pending
			fix = append(fix, r)
		case r.State == storage.Failed && r.Attempts >= cp.opt.MaxAttempts:
			r.State = storage.Dead
			fix = append(fix, r)
			return nil
		case r.State != storage.Pending && (r.NotBefore.After(now) || cp.domainClosedUntilLocked(r.URL).After(now)):
			// Not before its time, nor while its domain is saved open.
			cp.stats.Deferred++
			return nil
		}
		cp.front = append(cp.front, r.ID)
		return nil
	}, unfinished...)
	if cp.fail(err) != nil {
		return
	}
	if cp.putBatchesLocked(fix) != nil {
		return
	}
	if n := len(cp.front); n > 0 || cp.stats.Deferred > 0 {
		cp.opt.Logger.Info().Str("event", "checkpoint_resume").Int("redrive", n).Int("parked", cp.stats.Deferred).
			Msg("checkpoint: resuming what earlier runs did not finish")
	}
}

// domainClosedUntilLocked returns until when u's domain was saved open.
func (cp *Checkpoint) domainClosedUntilLocked(u string) time.Time {
	if len(cp.saved) == 0 {
		return time.Time{}
	}
	return cp.saved[domainOf(u)].RetryAt // "?", for a URL that does not parse, is no domain
}

// pop starts the run, then hands out the next unfinished record, with a
// token for IsVisited; the error is the store's.
func (cp *Checkpoint) pop() (storage.Record, bool, error) {
	cp.mu.Lock()
	defer cp.unlock()
	if err := cp.beginLocked(); err != nil {
		return storage.Record{}, false, err
	}
	for len(cp.front) > 0 {
		id := cp.front[0]
		cp.front = cp.front[1:]
		l := cp.idLock(id)
		l.Lock()
		r, found, err := cp.recordOf(id, false)
		l.Unlock()
		if err != nil {
			return storage.Record{}, false, cp.fail(err)
		}
		if !found || r.State == storage.Done || r.State == storage.Dead {
			continue
		}
		if _, _, perr := parseRequest(r.Request); perr != nil {
			r.State, r.LastError = storage.Dead, perr.Error()
			l.Lock()
			_ = cp.putLocked(r)
			l.Unlock()
			_ = cp.flush(true)
			continue
		}
		cp.vmu.Lock()
		cp.tokens[id]++
		cp.vmu.Unlock()
		cp.stats.Redriven++
		return r, true, nil
	}
	return storage.Record{}, false, nil
}

// parseRequest is collyx.ParseRequest, its errors the checkpoint's.
func parseRequest(b []byte) (u string, id uint64, err error) {
	if u, id, err = collyx.ParseRequest(b); err != nil {
		return "", 0, fmt.Errorf("checkpoint: %w", err)
	}
	return u, id, nil
}

// AddRequest is Colly's queue.Storage AddRequest; a known URL is not queued.
func (cp collyStorage) AddRequest(b []byte) error {
	u, id, err := parseRequest(b)
	if err != nil {
		return err
	}
	cp.mu.Lock()
	defer cp.unlock()
	if err := cp.beginLocked(); err != nil {
		return err
	}
	cp.vmu.Lock()
	known := cp.knownVisitLocked(id)
	cp.vmu.Unlock()
	if known {
		return nil
	}
	l := cp.idLock(id)
	l.Lock()
	defer l.Unlock()
	if _, found, err := cp.recordOf(id, false); err != nil || found {
		return cp.fail(err)
	}
	cp.fresh.take(id) // it has a record now
	rec := storage.Record{ID: id, URL: u, State: storage.Pending, Request: b, Updated: cp.now().UTC()}
	if err := cp.putLocked(rec); err != nil {
		return err
	}
	if err := cp.flush(true); err != nil {
		return err
	}
	cp.front = append(cp.front, id)
	return nil
}

// GetRequest is Colly's queue.Storage GetRequest. It hands the queue the
// URLs added to it (or saved with no collector); one a collector asked
// for itself it issues on that collector, as Resume does, since the queue
// runs every request on its own collector, with that one's callbacks.
func (cp collyStorage) GetRequest() ([]byte, error) {
	for {
		r, ok, err := cp.pop()
		if err != nil || !ok {
			return nil, cmp.Or(err, cp.errNow(), errQueueEmpty)
		}
		if _, owned := ownerOf(r.Request); !owned {
			return r.Request, nil
		}
		cp.redrive(r, nil)
	}
}

// QueueSize is Colly's queue.Storage QueueSize (parked URLs not counted).
func (cp collyStorage) QueueSize() (int, error) {
	cp.mu.Lock()
	defer cp.unlock()
	if err := cp.beginLocked(); err != nil {
		return 0, err
	}
	return len(cp.front), nil
}
