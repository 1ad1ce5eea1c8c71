package memory

import (
	"bytes"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/internal/backend"
)

// scanChunk is how many records Scan copies out per hold of the lock.
const scanChunk = 256

// store is an in-memory storage.Store. The zero value is not usable; call New.
type store struct {
	mu     sync.RWMutex
	recs   entries           // recs.at(i) has Seq i+1
	ids    map[uint64]uint64 // ID -> Seq
	data   arena             // the records' URLs, errors and requests
	counts backend.Tally
	closed bool // under both locks: read under either

	// metaMu guards meta, so that a crawl's metadata reads (a cookie jar
	// asks for each new host's) do not wait for its record writes. Close
	// takes it after mu.
	metaMu sync.RWMutex
	meta   map[string][]byte
}

// entry is a record with no pointer: values in the arena, times as numbers.
type entry struct {
	id                    uint64
	attempts              int
	notBefore, updated    stamp
	url, lastErr, request span
	state                 storage.State
}

// stamp is a time.Time without its location (records are kept in UTC).
type stamp struct {
	sec  int64
	nsec int32
	set  bool // false for the zero time
}

func stampOf(t time.Time) stamp {
	if t.IsZero() {
		return stamp{}
	}
	return stamp{sec: t.Unix(), nsec: int32(t.Nanosecond()), set: true}
}

func (s stamp) time() time.Time {
	if !s.set {
		return time.Time{}
	}
	return time.Unix(s.sec, int64(s.nsec)).UTC()
}

// New returns an empty store.
func New() storage.Store {
	return &store{ids: make(map[uint64]uint64), meta: make(map[string][]byte)}
}

// Put implements storage.Store.
func (s *store) Put(recs ...storage.Record) error {
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			return err
		}
	}
	var now time.Time // read once, for the first record without Updated (the checkpoint's all have one)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return storage.ErrClosed
	}
	for i := range recs {
		r := &recs[i]
		updated := r.Updated
		if updated.IsZero() {
			if now.IsZero() {
				now = time.Now()
			}
			updated = now
		}
		seq, ok := s.ids[r.ID]
		if !ok {
			s.recs.add(entry{id: r.ID})
			seq = uint64(s.recs.n)
			s.ids[r.ID] = seq
		} else {
			s.counts[s.recs.at(int(seq-1)).state]--
		}
		e := s.recs.at(int(seq - 1))
		e.attempts, e.state = r.Attempts, r.State
		e.notBefore, e.updated = stampOf(r.NotBefore), stampOf(updated)
		set(&s.data, &e.url, r.URL, true)
		set(&s.data, &e.lastErr, r.LastError, true)
		set(&s.data, &e.request, r.Request, r.Request != nil)
		s.counts[r.State]++
	}
	if s.data.buf.Wasteful() {
		s.compactLocked()
	}
	return nil
}

// compactLocked copies the live values into a new arena.
func (s *store) compactLocked() {
	var fresh arena
	for i := range s.recs.n {
		e := s.recs.at(i)
		e.url = fresh.keep(&s.data, e.url)
		e.lastErr = fresh.keep(&s.data, e.lastErr)
		e.request = fresh.keep(&s.data, e.request)
	}
	s.data = fresh
}

// record returns e as a storage.Record with values of its own.
func (s *store) record(e *entry, seq uint64) storage.Record {
	return storage.Record{
		ID:        e.id,
		URL:       string(s.data.bytes(e.url)),
		State:     e.state,
		Attempts:  e.attempts,
		LastError: string(s.data.bytes(e.lastErr)),
		NotBefore: e.notBefore.time(),
		Request:   s.data.clone(e.request),
		Seq:       seq,
		Updated:   e.updated.time(),
	}
}

// Get implements storage.Store.
func (s *store) Get(id uint64) (storage.Record, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return storage.Record{}, false, storage.ErrClosed
	}
	seq, ok := s.ids[id]
	if !ok {
		return storage.Record{}, false, nil
	}
	return s.record(s.recs.at(int(seq-1)), seq), true, nil
}

// Scan implements storage.Store, calling fn with no lock held.
func (s *store) Scan(fn func(storage.Record) error, states ...storage.State) error {
	want, err := backend.Wanted(states)
	if err != nil {
		return err
	}
	next := 0 // the index of the next record to look at
	return backend.Scan(fn, func(_ uint64, chunk []storage.Record) ([]storage.Record, error) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		if s.closed {
			return nil, storage.ErrClosed
		}
		for ; next < s.recs.n && len(chunk) < scanChunk; next++ {
			if e := s.recs.at(next); want[e.state] {
				chunk = append(chunk, s.record(e, uint64(next)+1))
			}
		}
		return chunk, nil
	})
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
	v := append([]byte{}, value...) // never nil: a value is stored
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	if s.closed {
		return storage.ErrClosed
	}
	s.meta[key] = v
	return nil
}

// Meta implements storage.Store.
func (s *store) Meta(key string) ([]byte, bool, error) {
	s.metaMu.RLock()
	defer s.metaMu.RUnlock()
	if s.closed {
		return nil, false, storage.ErrClosed
	}
	v, ok := s.meta[key]
	return bytes.Clone(v), ok, nil // nil if absent; a stored value never is
}

// Flush implements storage.Store; there is nothing to flush.
func (s *store) Flush() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return storage.ErrClosed
	}
	return nil
}

// Close implements storage.Store. It drops the data.
func (s *store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	s.closed = true
	s.recs, s.ids, s.meta, s.data = entries{}, nil, nil, arena{}
	return nil
}
