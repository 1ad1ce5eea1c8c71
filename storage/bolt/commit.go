package bolt

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"slices"

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
	var counts [int(storage.Dead) + 1]int
	if !decodeCounts(format.Get(keyCounts), &counts) {
		return corruptError(s.path, "the state counts are missing", nil)
	}
	// One allocation for every key of the batch. bbolt keeps key slices
	// until the commit, so none is reused.
	keys := make([]byte, 0, len(ents)*(8+8+9+9))
	key := func(b []byte) []byte { keys = append(keys, b...); return keys[len(keys)-len(b):] }
	var scratch [9]byte
	for _, e := range ents {
		sk := key(binary.BigEndian.AppendUint64(scratch[:0], e.seq))
		newKey := key(binary.BigEndian.AppendUint64(append(scratch[:0], byte(e.state)), e.seq))
		old := recs.Get(sk)
		if old == nil {
			if err := ids.Put(key(binary.BigEndian.AppendUint64(scratch[:0], e.id)), sk); err != nil {
				return s.commitError(err)
			}
			if err := states.Put(newKey, empty); err != nil {
				return s.commitError(err)
			}
		} else {
			ost, _, perr := peek(old)
			if perr != nil {
				return recordError(s.path, e.seq, perr)
			}
			if ost != e.state {
				if err := states.Delete(key(binary.BigEndian.AppendUint64(append(scratch[:0], byte(ost)), e.seq))); err != nil {
					return s.commitError(err)
				}
				if err := states.Put(newKey, empty); err != nil {
					return s.commitError(err)
				}
			}
			counts[ost]--
		}
		counts[e.state]++
		if err := recs.Put(sk, e.val); err != nil {
			return s.commitError(err)
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

func (s *Store) commitError(err error) error {
	return &FileError{Path: s.path, Detail: "commit failed", Err: err, Hint: hintCommit}
}
