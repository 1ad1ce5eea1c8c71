package bolt

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"

	bbolt "go.etcd.io/bbolt"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/internal/backend"
)

// loop commits every flush interval, or when Put fills a batch, until Close.
func (s *store) loop() {
	defer close(s.loopDone)
	for {
		select {
		case <-s.quit:
			return
		case <-s.kick:
		case <-s.o.Clock.After(s.o.FlushInterval):
		}
		_ = s.commit() // a failure is sticky: Put and Flush report it
	}
}

// Flush implements storage.Store: it commits what is buffered, fsynced.
func (s *store) Flush() error {
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return storage.ErrClosed
	}
	return s.commit()
}

// commit writes the buffer while Puts fill a fresh one; a failure sticks.
func (s *store) commit() error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()

	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	if len(s.buf) == 0 && len(s.metaBuf) == 0 && len(s.outBuf) == 0 {
		s.mu.Unlock()
		return nil
	}
	ents := slices.AppendSeq(make([]*entry, 0, len(s.buf)), maps.Values(s.buf))
	metas, outs := s.metaBuf, s.outBuf
	s.outBuf = nil
	s.com, s.buf = s.buf, make(map[uint64]*entry, len(s.buf))
	s.metaCom, s.metaBuf = s.metaBuf, make(map[string][]byte)
	nextSeq := s.nextSeq
	s.space.Broadcast()
	s.mu.Unlock()

	// In Seq order, which is key order: each leaf page is touched once.
	slices.SortFunc(ents, func(a, b *entry) int { return cmp.Compare(a.rec.Seq, b.rec.Seq) })
	err := s.write(ents, metas, outs, nextSeq)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = err
		s.o.Logger.Error().Str("file", s.path).Err(err).Int("records", len(ents)).Int("meta", len(metas)).
			Msg("checkpoint commit failed; the store refuses further writes")
	} else {
		s.com, s.metaCom = nil, nil
		s.commits++
		s.wrote += uint64(len(ents) + len(metas))
	}
	s.space.Broadcast()
	return err
}

// write commits ents, metas and outs, and what goes with them, in one transaction.
func (s *store) write(ents []*entry, metas map[string][]byte, outs []storage.OutputEntry, nextSeq uint64) (err error) {
	defer inUse(&err) // after the recover below has turned a panic into an error
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	tx, err := s.db.Begin(true)
	defer func() {
		if r := recover(); r != nil {
			err = corruptError(s.path, fmt.Sprintf("commit: bbolt failed (%v)", r), nil)
		} else if _, ours := err.(*FileError); err != nil && !ours { // bbolt's
			err = &FileError{Path: s.path, Detail: "commit failed", Err: err, Hint: hintCommit}
		}
		if err != nil && tx != nil {
			func() {
				defer func() { _ = recover() }()
				_ = tx.Rollback()
			}()
		}
	}()
	if err != nil {
		return err
	}

	format := tx.Bucket(bucketFormat)
	recs, reqs := tx.Bucket(bucketRecords), tx.Bucket(bucketRequests)
	ids, states := tx.Bucket(bucketIDs), tx.Bucket(bucketStates)
	// Appended in Seq order: fill the pages.
	recs.FillPercent, reqs.FillPercent, ids.FillPercent, states.FillPercent = 0.9, 0.9, 1, 0.9
	var counts backend.Tally
	if !decodeCounts(format.Get(keyCounts), &counts) {
		return corruptError(s.path, "the state counts are missing", nil)
	}
	// One allocation for the batch's keys and values (bbolt keeps each).
	size := 0
	for _, e := range ents {
		size += 8 + 2*9 + encodedLen(&e.rec)
		if e.req != reqKeep {
			size += len(e.rec.Request) + crcLen
		}
	}
	a := arena{b: make([]byte, 0, size)}
	// State index writes go sorted, last: out-of-order ones are quadratic.
	stateOps := make([]indexOp, 0, len(ents))
	var run []uint64 // IDs of new records with consecutive Seqs
	var runStart uint64
	flushRun := func() error {
		if len(run) == 0 {
			return nil
		}
		k := seqKey(runStart)
		err := ids.Put(k, encodeIDRun(make([]byte, 0, 8*len(run)+crcLen), k, run))
		run = run[:0]
		return err
	}
	for _, e := range ents {
		r := &e.rec
		sk := a.add(func(b []byte) []byte { return binary.BigEndian.AppendUint64(b, r.Seq) })
		newKey := a.add(func(b []byte) []byte { return stateKeyAppend(b, r.State, r.Seq) })
		if e.was == 0 {
			if len(run) > 0 && (runStart+uint64(len(run)) != r.Seq || len(run) == maxIDRun) {
				if err := flushRun(); err != nil {
					return err
				}
			}
			if len(run) == 0 {
				runStart = r.Seq
			}
			run = append(run, r.ID)
			stateOps = append(stateOps, indexOp{key: newKey, val: empty})
		} else {
			if e.was != r.State {
				oldKey := a.add(func(b []byte) []byte { return stateKeyAppend(b, e.was, r.Seq) })
				stateOps = append(stateOps, indexOp{key: oldKey}, indexOp{key: newKey, val: empty})
			}
			counts[e.was]--
		}
		counts[r.State]++
		if err := recs.Put(sk, a.add(func(b []byte) []byte { return encode(b, r) })); err != nil {
			return err
		}
		if err := s.writeRequest(reqs, sk, e, &a); err != nil {
			return err
		}
	}
	if err := flushRun(); err != nil {
		return err
	}
	slices.SortFunc(stateOps, func(a, b indexOp) int { return bytes.Compare(a.key, b.key) })
	for _, op := range stateOps {
		var err error
		if op.val == nil {
			err = states.Delete(op.key)
		} else {
			err = states.Put(op.key, op.val)
		}
		if err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	for k, v := range metas {
		if err := meta.Put([]byte(k), v); err != nil {
			return err
		}
	}
	if err := writeOutputs(tx, outs); err != nil {
		return err
	}
	if stored := binary.BigEndian.Uint64(format.Get(keyNextSeq)); nextSeq > stored {
		if err := format.Put(keyNextSeq, seqKey(nextSeq)); err != nil {
			return err
		}
	}
	if err := format.Put(keyCounts, encodeCounts(&counts)); err != nil {
		return err
	}
	return tx.Commit()
}

// maxIDRun is the most IDs one ID log value holds (32 KB).
const maxIDRun = 4096

// writeRequest brings the request stored under sk in line with e's.
func (s *store) writeRequest(reqs *bbolt.Bucket, sk []byte, e *entry, a *arena) error {
	req := e.rec.Request
	switch e.req {
	case reqKeep:
		return nil
	case reqCheck:
		old := reqs.Get(sk)
		if req == nil && old == nil {
			return nil
		}
		if req != nil && len(old) == len(req)+crcLen && bytes.Equal(old[:len(req)], req) &&
			binary.BigEndian.Uint32(old[len(req):]) == keyedCRC(sk, req) {
			return nil // unchanged, checksum intact
		}
	case reqWrite:
		if req == nil && e.was == 0 {
			return nil
		}
	}
	if req == nil {
		return reqs.Delete(sk)
	}
	return reqs.Put(sk, a.add(func(b []byte) []byte { return encodeRequest(b, sk, req) }))
}

// arena hands out slices of one buffer.
type arena struct{ b []byte }

// add returns what f appends to the buffer, capped.
func (a *arena) add(f func([]byte) []byte) []byte {
	n := len(a.b)
	a.b = f(a.b)
	return a.b[n:len(a.b):len(a.b)]
}

// indexOp is a write to an index bucket: a Put, or a Delete when val is nil.
type indexOp struct{ key, val []byte }
