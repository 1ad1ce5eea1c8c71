package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"sync"

	bbolt "go.etcd.io/bbolt"

	"github.com/breakwater-crawl/breakwater/storage"
)

// Store is a storage.Store in one bbolt file. Open it with Open; it is
// safe for concurrent use.
type Store struct {
	path string
	db   *bbolt.DB
	o    options

	mu sync.RWMutex
	// space is signalled (on mu) when the buffer is handed to a commit,
	// a commit ends, or the store closes: what a Put blocked on a full
	// buffer waits for.
	space *sync.Cond
	// buf holds records Put since the last commit began; com, while a
	// commit runs, the records it is writing (nil otherwise). Reads look
	// in buf, then com, then the file. The same for metadata.
	buf, com         map[uint64]*entry
	metaBuf, metaCom map[string][]byte
	counts           storage.Tally // as reads see them
	nextSeq          uint64
	err              error // sticky commit error
	closed           bool
	stats            Stats

	commitMu  sync.Mutex // one commit at a time
	kick      chan struct{}
	quit      chan struct{}
	loopDone  chan struct{}
	closeOnce sync.Once
}

// entry is a buffered record: its state and Seq for the indexes and
// filters, and its encoding.
type entry struct {
	id    uint64
	seq   uint64
	state storage.State
	val   []byte
}

// Stats describes the store's write activity.
type Stats struct {
	Buffered  int    // records and metadata entries Put but not yet committed
	Commits   uint64 // transactions committed since Open
	Committed uint64 // records and metadata entries written by them
}

var _ storage.Store = (*Store)(nil)

func newStore(path string, db *bbolt.DB, o options) (*Store, error) {
	s := &Store{
		path: path, db: db, o: o,
		buf: make(map[uint64]*entry), metaBuf: make(map[string][]byte),
		kick: make(chan struct{}, 1), quit: make(chan struct{}), loopDone: make(chan struct{}),
	}
	s.space = sync.NewCond(&s.mu)
	err := viewGuarded(db, path, "open", func(tx *bbolt.Tx) error {
		f := tx.Bucket(bucketFormat)
		s.nextSeq = binary.BigEndian.Uint64(f.Get(keyNextSeq))
		if !decodeCounts(f.Get(keyCounts), &s.counts) {
			return corruptError(path, "the state counts are missing", nil)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	go s.loop()
	return s, nil
}

// Path returns the checkpoint file's path.
func (s *Store) Path() string { return s.path }

// Stats returns the store's write activity so far.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.stats
	st.Buffered = len(s.buf) + len(s.metaBuf) + len(s.com) + len(s.metaCom)
	return st
}

// usable returns why the store takes no more writes, if it does not.
// Called with mu held.
func (s *Store) usable() error {
	if s.closed {
		return storage.ErrClosed
	}
	return s.err
}

// Put implements storage.Store. Records are encoded before the lock is
// taken; a record seen for the first time since the last commit costs one
// lookup in the file to learn whether it already has a Seq.
func (s *Store) Put(recs ...storage.Record) (err error) {
	ents := make([]entry, len(recs))
	now := s.o.clock.Now().UTC()
	for i := range recs {
		r := &recs[i]
		if err := r.Validate(); err != nil {
			return err
		}
		if r.Updated.IsZero() {
			c := *r
			c.Updated = now
			r = &c
		}
		val := encode(make([]byte, 0, maxEncodedLen(r)), r)
		if len(val) > bbolt.MaxValueSize {
			return fmt.Errorf("%w: record %d (%q) encodes to %d bytes; the limit is %d", storage.ErrInvalid, r.ID, r.URL, len(val), bbolt.MaxValueSize)
		}
		ents[i] = entry{id: r.ID, state: r.State, val: val}
	}

	defer guard(s.path, "put", &err, debug.SetPanicOnFault(true))
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	for len(s.buf)+len(s.metaBuf) >= 4*s.o.batchSize && s.usable() == nil {
		s.kickCommit()
		s.space.Wait()
	}
	if err := s.usable(); err != nil {
		return err
	}

	// Learn the Seq and state of records the buffers do not know, before
	// changing anything, so that a failed lookup leaves the store as it was.
	type known struct {
		seq   uint64
		state storage.State
	}
	var fromFile map[uint64]known
	var tx *bbolt.Tx
	defer func() {
		if tx != nil {
			_ = tx.Rollback()
		}
	}()
	for i := range ents {
		id := ents[i].id
		if s.buf[id] != nil || s.com[id] != nil {
			continue
		}
		if tx == nil {
			if tx, err = s.db.Begin(false); err != nil {
				return &FileError{Path: s.path, Detail: "cannot read the checkpoint", Err: err}
			}
			fromFile = make(map[uint64]known)
		}
		seqk := tx.Bucket(bucketIDs).Get(idKey(id))
		if seqk == nil {
			continue
		}
		seq := binary.BigEndian.Uint64(seqk)
		st, _, err := peek(tx.Bucket(bucketRecords).Get(seqk))
		if err != nil {
			return recordError(s.path, seq, err)
		}
		fromFile[id] = known{seq, st}
	}

	for i := range ents {
		e := &ents[i]
		var prev storage.State
		if old := s.buf[e.id]; old != nil {
			e.seq, prev = old.seq, old.state
		} else if old := s.com[e.id]; old != nil {
			e.seq, prev = old.seq, old.state
		} else if k, ok := fromFile[e.id]; ok {
			e.seq, prev = k.seq, k.state
		} else {
			e.seq = s.nextSeq
			s.nextSeq++
		}
		if prev != 0 {
			s.counts[prev]--
		}
		s.counts[e.state]++
		s.buf[e.id] = e
	}
	if len(s.buf)+len(s.metaBuf) >= s.o.batchSize {
		s.kickCommit()
	}
	return nil
}

// kickCommit asks the background loop to commit now.
func (s *Store) kickCommit() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Get implements storage.Store.
func (s *Store) Get(id uint64) (r storage.Record, ok bool, err error) {
	defer guard(s.path, "get", &err, debug.SetPanicOnFault(true))
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return r, false, storage.ErrClosed
	}
	if e := s.lookup(id); e != nil {
		r, err = decode(e.val, e.seq)
		return r, err == nil, err
	}
	tx, err := s.db.Begin(false)
	if err != nil {
		return r, false, &FileError{Path: s.path, Detail: "cannot read the checkpoint", Err: err}
	}
	defer tx.Rollback()
	seqk := tx.Bucket(bucketIDs).Get(idKey(id))
	if seqk == nil {
		return r, false, nil
	}
	seq := binary.BigEndian.Uint64(seqk)
	v := tx.Bucket(bucketRecords).Get(seqk)
	if v == nil {
		return r, false, corruptError(s.path, fmt.Sprintf("the ID index points at record %d, which is missing", seq), nil)
	}
	if r, err = decode(v, seq); err != nil {
		return storage.Record{}, false, recordError(s.path, seq, err)
	}
	return r, true, nil
}

// lookup returns the buffered entry for id, or nil. Called with mu held.
func (s *Store) lookup(id uint64) *entry {
	if e := s.buf[id]; e != nil {
		return e
	}
	return s.com[id]
}

// Counts implements storage.Store.
func (s *Store) Counts() (map[storage.State]int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, storage.ErrClosed
	}
	return s.counts.Map(), nil
}

// SetMeta implements storage.Store.
func (s *Store) SetMeta(key string, value []byte) error {
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
	if len(s.buf)+len(s.metaBuf) >= s.o.batchSize {
		s.kickCommit()
	}
	return nil
}

// Meta implements storage.Store.
func (s *Store) Meta(key string) (v []byte, ok bool, err error) {
	defer guard(s.path, "meta", &err, debug.SetPanicOnFault(true))
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, false, storage.ErrClosed
	}
	if v, ok := s.metaBuf[key]; ok {
		return bytes.Clone(v), true, nil
	}
	if v, ok := s.metaCom[key]; ok {
		return bytes.Clone(v), true, nil
	}
	tx, err := s.db.Begin(false)
	if err != nil {
		return nil, false, &FileError{Path: s.path, Detail: "cannot read the checkpoint", Err: err}
	}
	defer tx.Rollback()
	if v := tx.Bucket(bucketMeta).Get([]byte(key)); v != nil {
		return append([]byte{}, v...), true, nil
	}
	return nil, false, nil
}

// Close implements storage.Store: it stops the background commits,
// commits what is buffered and releases the file and its lock.
func (s *Store) Close() error {
	first := false
	var err error
	s.closeOnce.Do(func() {
		first = true
		s.mu.Lock()
		s.closed = true // from here on Put refuses, so nothing is lost after the last commit
		s.space.Broadcast()
		s.mu.Unlock()
		close(s.quit)
		<-s.loopDone
		err = s.commit()
		if cerr := s.db.Close(); err == nil && cerr != nil {
			err = &FileError{Path: s.path, Detail: "closing the checkpoint", Err: cerr}
		}
	})
	if !first {
		return nil
	}
	return err
}
