package bolt

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"slices"

	bbolt "go.etcd.io/bbolt"

	"github.com/breakwater-crawl/breakwater/storage"
)

// loop commits the buffer every flush interval, or sooner when Put fills
// a batch, until Close.
func (s *Store) loop() {
	defer close(s.loopDone)
	for {
		select {
		case <-s.quit:
			return
		case <-s.kick:
		case <-s.o.clock.After(s.o.flushInterval):
		}
		_ = s.commit() // a failure is sticky: Put and Flush report it
	}
}

// Flush implements storage.Store: it commits everything buffered and
// returns once that is on disk (bbolt fsyncs every commit).
func (s *Store) Flush() error {
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return storage.ErrClosed
	}
	return s.commit()
}

// commit hands the buffer to one bbolt transaction. While it runs, reads
// find the records in com; Puts go on filling a fresh buffer. On failure
// the error becomes sticky and com stays, so reads still see every Put.
func (s *Store) commit() error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()

	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	if len(s.buf) == 0 && len(s.metaBuf) == 0 {
		s.mu.Unlock()
		return nil
	}
	ents := make([]*entry, 0, len(s.buf))
	for _, e := range s.buf {
		ents = append(ents, e)
	}
	metas := s.metaBuf
	s.com, s.buf = s.buf, make(map[uint64]*entry, len(s.buf))
	s.metaCom, s.metaBuf = s.metaBuf, make(map[string][]byte)
	nextSeq := s.nextSeq
	s.space.Broadcast()
	s.mu.Unlock()

	// Seq order: records and index keys then go into the B+trees in key
	// order, which touches each leaf page once.
	slices.SortFunc(ents, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
	err := s.write(ents, metas, nextSeq)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = err
		s.o.log.Error().Str("file", s.path).Err(err).Int("records", len(ents)).Int("meta", len(metas)).
			Msg("checkpoint commit failed; the store refuses further writes")
	} else {
		s.com, s.metaCom = nil, nil
		s.stats.Commits++
		s.stats.Committed += uint64(len(ents) + len(metas))
	}
	s.space.Broadcast()
	return err
}

// write commits ents and metas in one bbolt transaction: each record, its
// ID-index entry (new records only), its state-index entry (moved when the
// state changed), the per-state counts and the next Seq.
func (s *Store) write(ents []*entry, metas map[string][]byte, nextSeq uint64) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	tx, err := s.db.Begin(true)
	if err != nil {
		return s.commitError(err)
	}
	defer func() {
		r := recover()
		if r != nil {
			err = corruptError(s.path, fmt.Sprintf("commit: bbolt failed (%v)", r), nil)
		}
		if err != nil {
			func() {
				defer func() { _ = recover() }()
				_ = tx.Rollback()
			}()
		}
	}()

	format := tx.Bucket(bucketFormat)
	recs, ids, states := tx.Bucket(bucketRecords), tx.Bucket(bucketIDs), tx.Bucket(bucketStates)
	// Records and states are appended in Seq order: fill their pages.
	recs.FillPercent, states.FillPercent = 0.9, 0.9
	var counts storage.Tally
	if !decodeCounts(format.Get(keyCounts), &counts) {
		return corruptError(s.path, "the state counts are missing", nil)
	}
	// One allocation for every key of the batch. bbolt keeps key slices
	// until the commit, so none is reused.
	keys := make([]byte, 0, len(ents)*(8+8+9+9))
	key := func(b []byte) []byte { keys = append(keys, b...); return keys[len(keys)-len(b):] }
	var scratch [9]byte
	// Records go in Seq order, which is their key order. The index writes
	// are collected and applied in their own key order afterwards: bbolt
	// splits nodes only at commit, so inserting out of order into a node
	// that grows within one transaction costs a memmove per key, which
	// is quadratic for a large batch.
	idOps := make([]indexOp, 0, len(ents))
	stateOps := make([]indexOp, 0, len(ents))
	for _, e := range ents {
		sk := key(binary.BigEndian.AppendUint64(scratch[:0], e.seq))
		newKey := key(binary.BigEndian.AppendUint64(append(scratch[:0], byte(e.state)), e.seq))
		old := recs.Get(sk)
		if old == nil {
			idOps = append(idOps, indexOp{key: key(binary.BigEndian.AppendUint64(scratch[:0], e.id)), val: sk})
			stateOps = append(stateOps, indexOp{key: newKey, val: empty})
		} else {
			ost, _, perr := peek(old)
			if perr != nil {
				return recordError(s.path, e.seq, perr)
			}
			if ost != e.state {
				stateOps = append(stateOps,
					indexOp{key: key(binary.BigEndian.AppendUint64(append(scratch[:0], byte(ost)), e.seq))},
					indexOp{key: newKey, val: empty})
			}
			counts[ost]--
		}
		counts[e.state]++
		if err := recs.Put(sk, e.val); err != nil {
			return s.commitError(err)
		}
	}
	for _, x := range []struct {
		b   *bbolt.Bucket
		ops []indexOp
	}{{ids, idOps}, {states, stateOps}} {
		slices.SortFunc(x.ops, func(a, b indexOp) int { return bytes.Compare(a.key, b.key) })
		for _, op := range x.ops {
			var err error
			if op.val == nil {
				err = x.b.Delete(op.key)
			} else {
				err = x.b.Put(op.key, op.val)
			}
			if err != nil {
				return s.commitError(err)
			}
		}
	}
	meta := tx.Bucket(bucketMeta)
	for k, v := range metas {
		if err := meta.Put([]byte(k), v); err != nil {
			return s.commitError(err)
		}
	}
	if stored := binary.BigEndian.Uint64(format.Get(keyNextSeq)); nextSeq > stored {
		if err := format.Put(keyNextSeq, seqKey(nextSeq)); err != nil {
			return s.commitError(err)
		}
	}
	if err := format.Put(keyCounts, encodeCounts(&counts)); err != nil {
		return s.commitError(err)
	}
	if err := tx.Commit(); err != nil {
		return s.commitError(err)
	}
	return nil
}

// indexOp is a write to an index bucket: a Put, or a Delete when val is nil.
type indexOp struct{ key, val []byte }

func (s *Store) commitError(err error) error {
	return &FileError{Path: s.path, Detail: "commit failed", Err: err, Hint: hintCommit}
}
