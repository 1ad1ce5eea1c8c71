package bolt

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"

	bbolt "go.etcd.io/bbolt"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/internal/backend"
)

// scanChunk is how many records Scan reads per read transaction.
const scanChunk = 512

// Scan implements storage.Store, a chunk of records at a time, calling fn
// with nothing held.
func (s *store) Scan(fn func(storage.Record) error, states ...storage.State) error {
	want, err := backend.Wanted(states)
	if err != nil {
		return err
	}
	return backend.Scan(fn, func(after uint64, buf []storage.Record) ([]storage.Record, error) {
		return s.scanChunk(after, &want, buf)
	})
}

// scanChunk appends to file the first records with Seq > after in the
// wanted states, at most max(scanChunk, buffered), in Seq order.
func (s *store) scanChunk(after uint64, want *backend.States, file []storage.Record) (_ []storage.Record, err error) {
	defer inUse(&err)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, storage.ErrClosed
	}
	limit := max(scanChunk, len(s.buf)+len(s.com))

	err = viewGuarded(s.db, s.path, "scan", func(tx *bbolt.Tx) error {
		reqs := newFollower(tx.Bucket(bucketRequests))
		emit := func(k, v []byte) (bool, error) {
			st, id, err := peek(v)
			if err != nil {
				return false, recordError(s.path, binary.BigEndian.Uint64(k), err)
			}
			if !want[st] || s.lookup(id) != nil { // filtered out, or superseded by a buffered Put
				return false, nil
			}
			r, err := readRecord(s.path, k, v, reqs)
			if err != nil {
				return false, err
			}
			file = append(file, r)
			return len(file) == limit, nil
		}
		if s.indexPays(want) {
			return s.scanIndex(tx, after, want, emit)
		}
		return s.scanRecords(tx, after, emit)
	})
	if err != nil {
		return nil, err
	}

	// With the buffered candidates (an entry in com that buf overrides is
	// not), in Seq order: the first limit are the answer.
	for _, m := range []map[uint64]*entry{s.com, s.buf} {
		for id, e := range m {
			if e.rec.Seq > after && want[e.rec.State] && s.lookup(id) == e {
				file = append(file, e.record())
			}
		}
	}
	slices.SortFunc(file, func(a, b storage.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	return file[:min(limit, len(file))], nil
}

// indexPays reports whether the wanted states hold under half the records.
func (s *store) indexPays(want *backend.States) bool {
	wanted, total := 0, 0
	for st, n := range s.counts {
		total += n
		if want[st] {
			wanted += n
		}
	}
	return 2*wanted < total
}

// scanRecords walks the records bucket from Seq after+1 until emit says stop.
func (s *store) scanRecords(tx *bbolt.Tx, after uint64, emit func(k, v []byte) (bool, error)) error {
	c := tx.Bucket(bucketRecords).Cursor()
	for k, v := c.Seek(seqKey(after + 1)); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return corruptError(s.path, "a record key is not 8 bytes", nil)
		}
		if stop, err := emit(k, v); stop || err != nil {
			return err
		}
	}
	return nil
}

// scanIndex merges one state-index cursor per wanted state, in Seq order.
func (s *store) scanIndex(tx *bbolt.Tx, after uint64, want *backend.States, emit func(k, v []byte) (bool, error)) error {
	type head struct {
		st  byte
		c   *bbolt.Cursor
		key []byte // nil when the state is exhausted
	}
	states, recs := tx.Bucket(bucketStates), newFollower(tx.Bucket(bucketRecords))
	var heads []*head
	valid := func(h *head, k []byte) []byte {
		if len(k) == 9 && k[0] == h.st {
			return k
		}
		return nil
	}
	for st := range want {
		if want[st] {
			h := &head{st: byte(st), c: states.Cursor()}
			k, _ := h.c.Seek(stateKeyAppend(nil, storage.State(st), after+1))
			h.key = valid(h, k)
			heads = append(heads, h)
		}
	}
	for {
		var next *head
		for _, h := range heads {
			if h.key != nil && (next == nil || bytes.Compare(h.key[1:], next.key[1:]) < 0) {
				next = h
			}
		}
		if next == nil {
			return nil
		}
		sk := next.key[1:]
		v := recs.get(sk) // one cursor for all lookups: no allocation each
		if v == nil {
			return corruptError(s.path, "the state index points at a missing record", nil)
		}
		if stop, err := emit(sk, v); stop || err != nil {
			return err
		}
		k, _ := next.c.Next()
		next.key = valid(next, k)
	}
}

// follower looks up ascending keys, stepping to near ones and seeking others.
type follower struct {
	c    *bbolt.Cursor
	k, v []byte
}

func newFollower(b *bbolt.Bucket) *follower { return &follower{c: b.Cursor()} }

// followSteps is how many entries a follower steps before it seeks.
const followSteps = 32

func (f *follower) get(key []byte) []byte {
	want := binary.BigEndian.Uint64(key)
	if len(f.k) == 8 && binary.BigEndian.Uint64(f.k) <= want {
		for range followSteps {
			if len(f.k) != 8 {
				break
			}
			switch at := binary.BigEndian.Uint64(f.k); {
			case at == want:
				return f.v
			case at > want: // passed it: keys come in order, so it is not there
				return nil
			}
			f.k, f.v = f.c.Next()
		}
	}
	f.k, f.v = f.c.Seek(key)
	if !bytes.Equal(f.k, key) {
		return nil
	}
	return f.v
}
