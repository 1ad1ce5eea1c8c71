package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/internal/backend"
)

// store is Open's storage.Store (the package doc says how it writes).
type store struct {
	path string
	db   *bbolt.DB
	o    Config // resolved: defaults filled in

	mu               sync.RWMutex
	space            *sync.Cond        // on mu: a Put blocked on a full buffer waits
	buf, com         map[uint64]*entry // reads look in buf, then the running commit's, then the file
	metaBuf, metaCom map[string][]byte
	outBuf           []storage.OutputEntry // PutOutput's accepted entries, committed with buf (output.go)
	index            index                 // every record's Seq and state (index.go)
	counts           backend.Tally         // as reads see them
	nextSeq          uint64
	err              error // sticky commit error
	closed           bool
	commits, wrote   uint64 // commits since Open, and the entries they wrote (the tests read them)

	commitMu sync.Mutex // one commit at a time

	outMu     sync.Mutex        // one PutOutput at a time, to its commit
	nextPos   map[string]uint64 // a log's next Pos, once read from the file (outMu)
	kick      chan struct{}
	quit      chan struct{}
	loopDone  chan struct{}
	closeOnce sync.Once
}

// entry is a buffered record (Seq and Updated set, Request its own).
type entry struct {
	rec storage.Record
	was storage.State // in the file before this commit (0 if new): the index entry it moves
	req reqAction
}

// reqAction is what a commit does with an entry's request.
type reqAction uint8

const (
	reqKeep  reqAction = iota // the file holds it, or will once the running commit ends
	reqWrite                  // the file's differs, or it has none yet
	reqCheck                  // unknown (not in memory): the commit compares
)

func newStore(path string, db *bbolt.DB, o Config) (*store, error) {
	s := &store{
		path: path, db: db, o: o,
		buf: make(map[uint64]*entry), metaBuf: make(map[string][]byte),
		kick: make(chan struct{}, 1), quit: make(chan struct{}), loopDone: make(chan struct{}),
	}
	s.space = sync.NewCond(&s.mu)
	err := viewGuarded(db, path, "open", func(tx *bbolt.Tx) (err error) {
		f := tx.Bucket(bucketFormat)
		s.nextSeq = binary.BigEndian.Uint64(f.Get(keyNextSeq))
		if !decodeCounts(f.Get(keyCounts), &s.counts) {
			return corruptError(path, "the state counts are missing", nil)
		}
		s.index, err = loadIndex(tx, path, s.nextSeq, &s.counts)
		return err
	})
	if err != nil {
		return nil, err
	}
	go s.loop()
	return s, nil
}

// Path returns the checkpoint file's path, which extensions/checkpoint
// names in its messages.
func (s *store) Path() string { return s.path }

// usable returns why the store takes no more writes, if so. Under mu.
func (s *store) usable() error {
	if s.closed {
		return storage.ErrClosed
	}
	return s.err
}

// Put implements storage.Store. It reads nothing from the file.
func (s *store) Put(recs ...storage.Record) error {
	return s.buffer(recs, nil)
}

// buffer adds recs and outs (accepted by PutOutput) to the buffer, so that
// one commit writes them all.
func (s *store) buffer(recs []storage.Record, outs []storage.OutputEntry) error {
	var now time.Time // read once, if a record needs it
	for i := range recs {
		r := &recs[i]
		if err := r.Validate(); err != nil {
			return err
		}
		n := encodedLen(r)
		if r.Updated.IsZero() {
			if now.IsZero() {
				now = s.o.Clock.Now().UTC()
			}
			n += timeLen(now) - timeLen(r.Updated)
		}
		if n = max(n, len(r.Request)+crcLen); n > bbolt.MaxValueSize {
			return fmt.Errorf("%w: record %d (%q) encodes to %d bytes; the limit is %d", storage.ErrInvalid, r.ID, r.URL, n, bbolt.MaxValueSize)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.buf)+len(s.metaBuf) >= 4*s.o.BatchSize && s.usable() == nil {
		s.kickCommit()
		s.space.Wait()
	}
	if err := s.usable(); err != nil {
		return err
	}
	for i := range recs {
		s.putLocked(&recs[i], now)
	}
	s.outBuf = append(s.outBuf, outs...)
	if len(s.buf)+len(s.metaBuf) >= s.o.BatchSize {
		s.kickCommit()
	}
	return nil
}

// putLocked buffers r, stamped with now if it has no Updated.
func (s *store) putLocked(r *storage.Record, now time.Time) {
	w, slot, known := s.index.get(r.ID)
	seq, prev := unpack(w)
	e := s.buf[r.ID]
	switch {
	case e != nil:
		// Put again before its commit: the same entry.
		req, act := e.rec.Request, e.req
		if !sameRequest(r.Request, req) {
			req, act = bytes.Clone(r.Request), reqWrite
		}
		e.rec, e.req = *r, act
		e.rec.Seq, e.rec.Request = seq, req
	case !known:
		seq, prev = s.nextSeq, 0
		s.nextSeq++
		e = &entry{rec: *r, req: reqWrite}
		e.rec.Seq, e.rec.Request = seq, bytes.Clone(r.Request)
		s.buf[r.ID] = e
	default:
		e = &entry{rec: *r, was: prev, req: reqCheck}
		e.rec.Seq = seq
		if c := s.com[r.ID]; c != nil && sameRequest(r.Request, c.rec.Request) {
			// The running commit writes this request: share its copy.
			e.rec.Request, e.req = c.rec.Request, reqKeep
		} else {
			e.rec.Request = bytes.Clone(r.Request)
			if c != nil {
				e.req = reqWrite
			}
		}
		s.buf[r.ID] = e
	}
	if e.rec.Updated.IsZero() {
		e.rec.Updated = now
	}
	if prev != 0 {
		s.counts[prev]--
	}
	s.counts[r.State]++
	s.index.set(r.ID, slot, pack(seq, r.State))
}

// sameRequest reports whether a and b are equal, nil unlike empty.
func sameRequest(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func (s *store) kickCommit() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Get implements storage.Store.
func (s *store) Get(id uint64) (r storage.Record, ok bool, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return r, false, storage.ErrClosed
	}
	w, _, ok := s.index.get(id)
	if !ok {
		return r, false, nil
	}
	if e := s.lookup(id); e != nil {
		return e.record(), true, nil
	}
	seq, _ := unpack(w)
	if r, err = s.getFile(id, seq); err != nil {
		return storage.Record{}, false, err
	}
	return r, true, nil
}

// getFile reads the record of id, with Seq seq, from the file.
func (s *store) getFile(id, seq uint64) (r storage.Record, err error) {
	defer inUse(&err)
	err = viewGuarded(s.db, s.path, "get", func(tx *bbolt.Tx) (err error) {
		sk := seqKey(seq)
		v := tx.Bucket(bucketRecords).Get(sk)
		if v == nil {
			return corruptError(s.path, fmt.Sprintf("the ID log names record %d, which is missing", seq), nil)
		}
		r, err = readRecord(s.path, sk, v, newFollower(tx.Bucket(bucketRequests)))
		if err == nil && r.ID != id {
			err = corruptError(s.path, fmt.Sprintf("record %d has ID %d, the ID log says %d", seq, r.ID, id), nil)
		}
		return err
	})
	return r, err
}

// readRecord decodes record v under key k, with its request from reqs.
func readRecord(path string, k, v []byte, reqs *follower) (storage.Record, error) {
	seq := binary.BigEndian.Uint64(k)
	r, hasReq, err := decode(v, seq)
	if err != nil {
		return r, recordError(path, seq, err)
	}
	if hasReq {
		rv := reqs.get(k)
		if rv == nil {
			return storage.Record{}, corruptError(path, fmt.Sprintf("record %d has a request, which is missing", seq), nil)
		}
		if r.Request, err = decodeRequest(k, rv); err != nil {
			return storage.Record{}, recordError(path, seq, err)
		}
	}
	return r, nil
}

func (s *store) lookup(id uint64) *entry {
	if e := s.buf[id]; e != nil {
		return e
	}
	return s.com[id]
}

// record returns the entry's record, with a Request of its own.
func (e *entry) record() storage.Record {
	r := e.rec
	r.Request = bytes.Clone(r.Request)
	return r
}

// Counts implements storage.Store.
func (s *store) Counts() (map[storage.State]int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, storage.ErrClosed
	}
	return s.counts.Map(), nil
}

// SetMeta implements storage.Store.
func (s *store) SetMeta(key string, value []byte) error {
	if err := storage.ValidateMetaKey(key); err != nil {
		return err
	}
	if len(value) > bbolt.MaxValueSize {
		return fmt.Errorf("%w: metadata %q of %d bytes; the limit is %d", storage.ErrInvalid, key, len(value), bbolt.MaxValueSize)
	}
	v := append([]byte{}, value...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	s.metaBuf[key] = v
	if len(s.buf)+len(s.metaBuf) >= s.o.BatchSize {
		s.kickCommit()
	}
	return nil
}

// Meta implements storage.Store.
func (s *store) Meta(key string) (v []byte, ok bool, err error) {
	defer inUse(&err)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, false, storage.ErrClosed
	}
	if v, ok = s.metaBuf[key]; !ok {
		v, ok = s.metaCom[key]
	}
	if ok {
		return bytes.Clone(v), true, nil
	}
	err = viewGuarded(s.db, s.path, "meta", func(tx *bbolt.Tx) error {
		v = bytes.Clone(tx.Bucket(bucketMeta).Get([]byte(key)))
		return nil
	})
	return v, v != nil && err == nil, err
}

// Close implements storage.Store: it commits, then releases the file.
func (s *store) Close() (err error) {
	s.closeOnce.Do(func() { // a later call returns nil
		s.mu.Lock()
		s.closed = true // Put refuses from here: nothing comes after the last commit
		s.space.Broadcast()
		s.mu.Unlock()
		close(s.quit)
		<-s.loopDone
		err = s.commit()
		if cerr := s.db.Close(); err == nil && cerr != nil {
			err = &FileError{Path: s.path, Detail: "closing the checkpoint", Err: cerr}
		}
	})
	return err
}
