package checkpoint

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
)

// Group commit. A Put per write, under the store's one lock, made the
// crawl's goroutines queue on it. So a write lands in a sharded buffer (the
// newest record per ID), and a callback that ends when the buffer is due
// hands all of it to the store while the others go on; the last callback
// under way always does, so that when a crawl's callbacks have returned
// every record is in the store. Reads see the buffer, then the batch being
// put, then the store. A batch is a cut of every shard at once: a record
// written before another (a link's before its page's done record) is never
// put after it. storage/bolt's durability is unchanged (its flush interval
// after the hand-over); Flush, Close, Judge and the store-wide reads put the
// buffer first.

// pending is the group commit's buffer: the newest record per ID, in
// shards by ID, each a slice kept from batch to batch. A batch's records
// stay in their shards while they are put (readers find them there), and
// are cut off after: a flush allocates nothing.
type pending struct {
	shards  [shardCount]pendShard
	n       atomic.Int64  // records in the shards, not being put
	since   atomic.Int64  // when the first of them was added, in ns of the monotonic clock since start
	start   time.Time     // a monotonic reading: since and due read only the monotonic clock
	written atomic.Uint64 // bit i: shard i holds records not being put (set and cleared with its lock held)
	putting atomic.Bool   // a batch is being put
	flushMu sync.Mutex    // one batch at a time, in order

	// The batch being put (flushMu held): its shards, and its records
	// split for putBatch.
	held              uint64
	unfinished, final []storage.Record
}

// pendShard is one shard of the buffer.
type pendShard struct {
	mu      sync.Mutex
	recs    []storage.Record // recs[:putting] are being put; after them at most one record per ID
	putting int
	_       [24]byte // a shard to a cache line (mutex, slice, int: 40 bytes): no false sharing
}

// find returns the index of id's record not being put, or -1 (s.mu held).
func (s *pendShard) find(id uint64) int {
	for i := len(s.recs) - 1; i >= s.putting; i-- {
		if s.recs[i].ID == id {
			return i
		}
	}
	return -1
}

// shardCount is how many shards the buffer has: a bit each in written.
const shardCount = 64

// index is id's shard.
func (p *pending) index(id uint64) int { return int(idHash(id) >> 58) }

// The buffer is due at flushAt records, or when its oldest is flushAge old.
const (
	flushAt  = 256
	flushAge = 5 * time.Millisecond
)

// due reports whether the buffer should be put now, though callbacks are under way.
func (p *pending) due() bool {
	n := p.n.Load()
	return n >= flushAt || (n > 0 && time.Since(p.start)-time.Duration(p.since.Load()) >= flushAge)
}

// add buffers recs (the later of one ID wins).
func (p *pending) add(recs []storage.Record) {
	for i := range recs {
		k := p.index(recs[i].ID)
		sh := &p.shards[k]
		sh.mu.Lock()
		if j := sh.find(recs[i].ID); j >= 0 {
			sh.recs[j] = recs[i]
		} else {
			if p.n.Add(1) == 1 {
				p.since.Store(int64(time.Since(p.start)))
			}
			sh.recs = append(sh.recs, recs[i])
		}
		p.written.Or(1 << k)
		sh.mu.Unlock()
	}
}

// get returns id's record as buffered or being put.
func (p *pending) get(id uint64) (storage.Record, bool) {
	sh := &p.shards[p.index(id)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for i := len(sh.recs) - 1; i >= 0; i-- {
		if sh.recs[i].ID == id {
			return sh.recs[i], true
		}
	}
	return storage.Record{}, false
}

// take makes every written shard's records the batch at once (flushMu
// held), split into p.unfinished and p.final, and reports whether there
// were any. They stay in their shards, being put, until done cuts them off.
//
// It locks the shards written bits name until, all of them held, no other
// bit is set: a record added before one it takes set its shard's bit
// before that one was added, so it is taken too (the cut).
func (p *pending) take() bool {
	if p.written.Load() == 0 {
		return false
	}
	var held uint64
	for {
		more := p.written.Load() &^ held
		if more == 0 {
			break
		}
		for m := more; m != 0; m &= m - 1 {
			p.shards[bits.TrailingZeros64(m)].mu.Lock()
		}
		held |= more
	}
	unfinished, final := p.unfinished[:0], p.final[:0]
	n := 0
	for m := held; m != 0; m &= m - 1 {
		sh := &p.shards[bits.TrailingZeros64(m)]
		for _, r := range sh.recs {
			if r.State == storage.Done || r.State == storage.Dead {
				final = append(final, r)
			} else {
				unfinished = append(unfinished, r)
			}
		}
		sh.putting = len(sh.recs)
		n += len(sh.recs)
	}
	p.unfinished, p.final, p.held = unfinished, final, held
	p.written.And(^held)
	p.n.Add(-int64(n))
	p.putting.Store(true)
	for m := held; m != 0; m &= m - 1 {
		p.shards[bits.TrailingZeros64(m)].mu.Unlock()
	}
	return true
}

// done cuts the batch put off its shards (flushMu held), keeping what
// was added meanwhile.
func (p *pending) done() {
	for m := p.held; m != 0; m &= m - 1 {
		sh := &p.shards[bits.TrailingZeros64(m)]
		sh.mu.Lock()
		rest := len(sh.recs) - sh.putting
		if c := cap(sh.recs); c > 4*flushAt && rest < c/4 {
			// After a burst (a slow store): a slice about the size in use.
			sh.recs = append(make([]storage.Record, 0, 2*rest), sh.recs[sh.putting:]...)
		} else {
			copy(sh.recs, sh.recs[sh.putting:])
			clear(sh.recs[rest:]) // holding no record's strings
			sh.recs = sh.recs[:rest]
		}
		sh.putting = 0
		sh.mu.Unlock()
	}
	p.putting.Store(false)
	clear(p.unfinished)
	clear(p.final)
	p.unfinished, p.final, p.held = p.unfinished[:0], p.final[:0], 0
}

// flush puts the buffer into the store. With wait it waits for a batch
// under way and returns the store's error; without, it leaves the buffer
// to the caller under way, which goes on while what came in meanwhile is
// due or no callback is under way to put it later.
func (cp *Checkpoint) flush(wait bool) error {
	p := &cp.pend
	for first := true; p.n.Load() > 0; first = false {
		if !wait && !first && !p.due() && cp.active.Load() > 0 {
			// What came in meanwhile is not due: a callback under way puts it.
			break
		}
		if wait {
			p.flushMu.Lock()
		} else if !p.flushMu.TryLock() {
			return nil
		}
		var err error
		took := p.take()
		if took {
			if !cp.failed() {
				err = cp.fail(cp.putBatch(p.unfinished, p.final))
			}
			p.done()
		}
		p.flushMu.Unlock()
		if err != nil {
			return err
		}
		if !took && !wait {
			// Counted, not yet marked written: its writer's callback puts it.
			break
		}
	}
	if wait {
		// A batch taken before the buffer emptied may still be on its way.
		p.flushMu.Lock()
		p.flushMu.Unlock() //nolint:staticcheck // a barrier: the batch under way is put
	}
	return cp.errNow()
}

// putChunk is how many unfinished records go to the store in one Put.
const putChunk = 64

// putBatch puts the unfinished records a chunk at a time (the store's
// lock is never held long against its readers), then every final one in
// one Put: a link's record (barrier.go) is put before or with its page's
// done record, so a store that commits between two Puts never has a page
// done without its links.
func (cp *Checkpoint) putBatch(unfinished, final []storage.Record) error {
	for i := 0; i < len(unfinished); i += putChunk {
		if err := cp.store.Put(unfinished[i:min(i+putChunk, len(unfinished))]...); err != nil {
			return err
		}
	}
	if len(final) == 0 {
		return nil
	}
	return cp.putFinal(final) // with the records staged for them (sink.go)
}

// lookup returns id's record as it stands for the store: buffered, being
// put, or stored.
func (cp *Checkpoint) lookup(id uint64) (storage.Record, bool, error) {
	if cp.pend.n.Load() > 0 || cp.pend.putting.Load() {
		if r, ok := cp.pend.get(id); ok {
			return r, true, nil
		}
	}
	return cp.store.Get(id)
}
