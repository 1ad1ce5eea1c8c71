package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/breakwater-crawl/breakwater/storage"
)

// The outputs (storage.OutputStore) live in their own bucket, made by the
// first PutOutput: a file without one has no output yet.
//
//	outputs/<output>/ids          ID (8 bytes) → Pos (8 bytes) and the part's name
//	outputs/<output>/p<part>      Pos (8 bytes) → ID (8 bytes) and the data
var (
	bucketOutputs = []byte("outputs")
	bucketOutIDs  = []byte("ids")
)

func partBucket(part string) []byte { return append([]byte{'p'}, part...) }

// outputBucket returns output's bucket name, or nil if it has none yet.
func outputBucket(tx *bbolt.Tx, output string, name []byte) *bbolt.Bucket {
	if root := tx.Bucket(bucketOutputs); root != nil {
		if ob := root.Bucket([]byte(output)); ob != nil {
			return ob.Bucket(name)
		}
	}
	return nil
}

func logKey(output, part string) string { return fmt.Sprintf("%d:%s%s", len(output), output, part) }

// PutOutput implements storage.OutputStore: the entries and recs join the
// buffer, which is committed at once; it returns once that commit is done.
// PutOutputs run one at a time: each decides against the file alone.
func (s *store) PutOutput(entries []storage.OutputEntry, recs ...storage.Record) ([]storage.OutputEntry, error) {
	for i := range entries {
		if err := entries[i].Validate(); err != nil {
			return nil, err
		}
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.mu.RLock()
	err := s.usable()
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	var accepted []storage.OutputEntry
	if len(entries) > 0 {
		if accepted, err = s.acceptOutputs(entries); err != nil {
			return nil, err
		}
	}
	if err := s.buffer(recs, accepted); err != nil {
		s.nextPos = nil // read again: the Pos handed out are not written
		return nil, err
	}
	if err := s.commit(); err != nil {
		return nil, err
	}
	return accepted, nil
}

// acceptOutputs returns the entries whose ID has none in their output,
// with their Pos and a Data of their own (outMu held).
func (s *store) acceptOutputs(entries []storage.OutputEntry) (accepted []storage.OutputEntry, err error) {
	defer inUse(&err)
	if s.nextPos == nil {
		s.nextPos = map[string]uint64{}
	}
	type key struct {
		output string
		id     uint64
	}
	taken := map[key]bool{}
	err = viewGuarded(s.db, s.path, "put output", func(tx *bbolt.Tx) error {
		for _, e := range entries {
			k := key{e.Output, e.ID}
			if taken[k] {
				continue
			}
			taken[k] = true
			if ids := outputBucket(tx, e.Output, bucketOutIDs); ids != nil && ids.Get(seqKey(e.ID)) != nil {
				continue
			}
			lk := logKey(e.Output, e.Part)
			pos, ok := s.nextPos[lk]
			if lb := outputBucket(tx, e.Output, partBucket(e.Part)); !ok && lb != nil {
				if last, _ := lb.Cursor().Last(); last != nil {
					pos = binary.BigEndian.Uint64(last) + 1
				}
			}
			s.nextPos[lk] = pos + 1
			e.Pos, e.Data = pos, bytes.Clone(e.Data)
			accepted = append(accepted, e)
		}
		return nil
	})
	if err != nil {
		s.nextPos = nil // read again: what was handed out may not be written
	}
	return accepted, err
}

// writeOutputs writes the entries PutOutput accepted (in write's transaction).
func writeOutputs(tx *bbolt.Tx, outs []storage.OutputEntry) error {
	if len(outs) == 0 {
		return nil
	}
	root, err := tx.CreateBucketIfNotExists(bucketOutputs)
	if err != nil {
		return err
	}
	for _, e := range outs {
		ob, err := root.CreateBucketIfNotExists([]byte(e.Output))
		if err != nil {
			return err
		}
		ids, err := ob.CreateBucketIfNotExists(bucketOutIDs)
		if err != nil {
			return err
		}
		lb, err := ob.CreateBucketIfNotExists(partBucket(e.Part))
		if err != nil {
			return err
		}
		lb.FillPercent = 1 // appended in Pos order
		pk := seqKey(e.Pos)
		if err := ids.Put(seqKey(e.ID), append(pk, e.Part...)); err != nil {
			return err
		}
		if err := lb.Put(pk, append(seqKey(e.ID), e.Data...)); err != nil {
			return err
		}
	}
	return nil
}

// ScanOutput implements storage.OutputStore: 256 entries per read
// transaction.
func (s *store) ScanOutput(output, part string, fn func(storage.OutputEntry) error) error {
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return storage.ErrClosed
	}
	from := seqKey(0)
	for {
		var chunk []storage.OutputEntry
		err := viewGuarded(s.db, s.path, "scan output", func(tx *bbolt.Tx) error {
			lb := outputBucket(tx, output, partBucket(part))
			if lb == nil {
				return nil
			}
			c := lb.Cursor()
			for k, v := c.Seek(from); k != nil && len(chunk) < scanOutputChunk; k, v = c.Next() {
				if len(k) != 8 || len(v) < 8 {
					return corruptError(s.path, fmt.Sprintf("output %q part %q: an entry of %d+%d bytes", output, part, len(k), len(v)), nil)
				}
				chunk = append(chunk, storage.OutputEntry{Output: output, Part: part, Pos: binary.BigEndian.Uint64(k),
					ID: binary.BigEndian.Uint64(v), Data: bytes.Clone(v[8:])})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, e := range chunk {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(chunk) < scanOutputChunk {
			return nil
		}
		from = seqKey(chunk[len(chunk)-1].Pos + 1)
	}
}

const scanOutputChunk = 256

var _ storage.OutputStore = (*store)(nil)
