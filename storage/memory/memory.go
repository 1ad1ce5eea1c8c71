package memory

import (
	"bytes"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
)

// scanChunk is how many records Scan copies out under the lock before it
// releases the lock and calls fn for them.
const scanChunk = 256

// Store is an in-memory storage.Store. The zero value is not usable; call New.
type Store struct {
	mu     sync.RWMutex
	recs   []storage.Record  // recs[i].Seq == i+1
	ids    map[uint64]uint64 // ID -> Seq
	counts storage.Tally
	meta   map[string][]byte
	closed bool
}

var _ storage.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{ids: make(map[uint64]uint64), meta: make(map[string][]byte)}
}

// Put implements storage.Store.
func (s *Store) Put(recs ...storage.Record) error {
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			return err
		}
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return storage.ErrClosed
	}
	for _, r := range recs {
		r = clone(r)
		if r.Updated.IsZero() {
			r.Updated = now.UTC()
		}
		if seq, ok := s.ids[r.ID]; ok {
			old := &s.recs[seq-1]
			s.counts[old.State]--
			r.Seq = seq
			*old = r
		} else {
			r.Seq = uint64(len(s.recs)) + 1
			s.ids[r.ID] = r.Seq
			s.recs = append(s.recs, r)
		}
		s.counts[r.State]++
	}
	return nil
}

// Get implements storage.Store.
func (s *Store) Get(id uint64) (storage.Record, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return storage.Record{}, false, storage.ErrClosed
	}
	seq, ok := s.ids[id]
	if !ok {
		return storage.Record{}, false, nil
	}
	return clone(s.recs[seq-1]), true, nil
}

// Scan implements storage.Store. It copies records out a chunk at a time
// and calls fn with no lock held.
func (s *Store) Scan(fn func(storage.Record) error, states ...storage.State) error {
	if err := storage.ValidateStates(states); err != nil {
		return err
	}
	var want [int(storage.Dead) + 1]bool
	for _, st := range states {
		want[st] = true
	}
	all := len(states) == 0
	chunk := make([]storage.Record, 0, scanChunk)
	for next := 0; ; {
		chunk = chunk[:0]
		s.mu.RLock()
		if s.closed {
			s.mu.RUnlock()
			return storage.ErrClosed
		}
		for ; next < len(s.recs) && len(chunk) < scanChunk; next++ {
			if r := &s.recs[next]; all || want[r.State] {
				chunk = append(chunk, clone(*r))
			}
		}
		s.mu.RUnlock()
		if len(chunk) == 0 {
			return nil
		}
		for _, r := range chunk {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
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
	v := bytes.Clone(value)
	if v == nil {
		v = []byte{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return storage.ErrClosed
	}
	s.meta[key] = v
	return nil
}

// Meta implements storage.Store.
func (s *Store) Meta(key string) ([]byte, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, false, storage.ErrClosed
	}
	v, ok := s.meta[key]
	if !ok {
		return nil, false, nil
	}
	return bytes.Clone(v), true, nil
}

// Flush implements storage.Store; there is nothing to flush.
func (s *Store) Flush() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return storage.ErrClosed
	}
	return nil
}

// Close implements storage.Store. It drops the data.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.recs, s.ids, s.meta = nil, nil, nil
	return nil
}

// clone returns r with its own copy of Request and its times in UTC
// without a monotonic reading, as a persistent store would return them.
func clone(r storage.Record) storage.Record {
	r.Request = bytes.Clone(r.Request)
	r.NotBefore = r.NotBefore.UTC()
	r.Updated = r.Updated.UTC()
	return r
}
