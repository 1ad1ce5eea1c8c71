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
// shards by ID, each a slice (a map per shard and take cost a kilobyte of
// allocation a flush; a shard holds a few records between flushes).
type pending struct {
	shards            [shardCount]pendShard
	n                 atomic.Int64                 // records in the shards
	since             atomic.Int64                 // when the first of them was added, in Unix ns
	written           atomic.Uint64                // bit i: shard i holds records (set and cleared with its lock held)
	putting           atomic.Pointer[pendBatch]    // the batch being put, read-only
	flushMu           sync.Mutex                   // one batch at a time, in order
	spare             [shardCount][]storage.Record // slices for the next take to swap in, made before its locks (flushMu held)
	sizes             [shardCount]int              // each shard's size at the last take (flushMu held)
	unfinished, final []storage.Record             // putBatch's scratch, emptied after each batch (flushMu held)
}

// pendShard is one shard of the buffer.
type pendShard struct {
	mu   sync.Mutex
	recs []storage.Record // at most one record per ID
	_    [32]byte         // a shard to a cache line (mutex and slice: 32 bytes): no false sharing
}

// find returns the index of id's record in s.recs, or -1 (s.mu held).
func (s *pendShard) find(id uint64) int {
	for i := len(s.recs) - 1; i >= 0; i-- {
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

// pendBatch is the slices a take took, with their shards: a callback's
// flush mostly finds one or two shards written, which few holds without
// a second allocation.
type pendBatch struct {
	taken []takenShard
	few   [2]takenShard
	n     int // records in taken
}

type takenShard struct {
	shard int
	recs  []storage.Record
}

// The buffer is due at flushAt records, or when its oldest is flushAge old.
const (
	flushAt  = 256
	flushAge = 5 * time.Millisecond
)

// due reports whether the buffer should be put now, though callbacks are under way.
func (p *pending) due() bool {
	n := p.n.Load()
	return n >= flushAt || (n > 0 && time.Since(time.Unix(0, p.since.Load())) >= flushAge)
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
				p.since.Store(time.Now().UnixNano())
			}
			sh.recs = append(sh.recs, recs[i])
		}
		p.written.Or(1 << k)
		sh.mu.Unlock()
	}
}

// get returns id's record as buffered or being put.
func (p *pending) get(id uint64) (storage.Record, bool) {
	k := p.index(id)
	sh := &p.shards[k]
	sh.mu.Lock()
	if j := sh.find(id); j >= 0 {
		r := sh.recs[j]
		sh.mu.Unlock()
		return r, true
	}
	sh.mu.Unlock()
	if b := p.putting.Load(); b != nil {
		for _, t := range b.taken {
			if t.shard == k {
				for i := len(t.recs) - 1; i >= 0; i-- {
					if t.recs[i].ID == id {
						return t.recs[i], true
					}
				}
				return storage.Record{}, false
			}
		}
	}
	return storage.Record{}, false
}

// take empties every written shard at once (flushMu held) and publishes
// the batch as being put before a reader can miss it; nil when no shard
// was written.
//
// It locks the shards written bits name until, all of them held, no other
// bit is set: a record added before one it takes set its shard's bit
// before that one was added, so it is taken too (the cut).
func (p *pending) take() *pendBatch {
	if p.written.Load() == 0 {
		return nil
	}
	for i := range p.spare {
		// A fresh slice only for a shard the last batch took from (about its
		// size); an empty shard keeps its slice, so a take makes a few.
		if p.spare[i] == nil && p.sizes[i] > 0 {
			p.spare[i] = make([]storage.Record, 0, p.sizes[i])
		}
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
	batch := new(pendBatch)
	if k := bits.OnesCount64(held); k <= len(batch.few) {
		batch.taken = batch.few[:0]
	} else {
		batch.taken = make([]takenShard, 0, k)
	}
	p.sizes = [shardCount]int{}
	for m := held; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		sh := &p.shards[i]
		p.sizes[i] = len(sh.recs)
		// With no spare, sh.recs is nil until its next write.
		batch.taken = append(batch.taken, takenShard{shard: i, recs: sh.recs})
		sh.recs, p.spare[i] = p.spare[i], nil
		batch.n += p.sizes[i]
	}
	p.written.And(^held)
	p.n.Add(-int64(batch.n))
	p.putting.Store(batch)
	for m := held; m != 0; m &= m - 1 {
		p.shards[bits.TrailingZeros64(m)].mu.Unlock()
	}
	return batch
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
		b := p.take()
		if b != nil && b.n > 0 && !cp.failed() {
			err = cp.fail(cp.putBatch(b))
		}
		p.putting.Store(nil) // its slices are let go: a reader may still hold them
		p.flushMu.Unlock()
		if err != nil {
			return err
		}
		if b == nil && !wait {
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

// putBatch puts b's unfinished records a chunk at a time (the store's
// lock is never held long against its readers), then every final one in
// one Put: a link's record (barrier.go) is put before or with its page's
// done record, so a store that commits between two Puts never has a page
// done without its links (flushMu held: the scratch slices are its).
func (cp *Checkpoint) putBatch(b *pendBatch) error {
	p := &cp.pend
	unfinished, final := p.unfinished[:0], p.final[:0]
	for _, t := range b.taken {
		for _, r := range t.recs {
			if r.State == storage.Done || r.State == storage.Dead {
				final = append(final, r)
			} else {
				unfinished = append(unfinished, r)
			}
		}
	}
	defer func() {
		// Kept for the next batch, holding no record's strings.
		clear(unfinished)
		clear(final)
		p.unfinished, p.final = unfinished[:0], final[:0]
	}()
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
	if cp.pend.n.Load() > 0 || cp.pend.putting.Load() != nil {
		if r, ok := cp.pend.get(id); ok {
			return r, true, nil
		}
	}
	return cp.store.Get(id)
}
