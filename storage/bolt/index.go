package bolt

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sort"

	bbolt "go.etcd.io/bbolt"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/internal/backend"
)

// index maps every record's ID to its Seq and state, packed in one word:
// the file's at Open in a table built once, those created since in a map.
type index struct {
	loaded table             // the records in the file at Open
	added  map[uint64]uint64 // the records created since
}

// get returns the word of id, and its slot in the loaded table (or nil).
func (ix *index) get(id uint64) (w uint64, slot *uint64, ok bool) {
	if slot = ix.loaded.find(id); slot != nil {
		return *slot, slot, true
	}
	w, ok = ix.added[id]
	return w, nil, ok
}

func (ix *index) set(id uint64, slot *uint64, w uint64) {
	if slot != nil {
		*slot = w
	} else {
		ix.added[id] = w
	}
}

// stateBits is how many low bits of an index word hold the state.
const stateBits = 3

// maxSeq bounds the Seqs the index can pack.
const maxSeq = 1<<(64-stateBits) - 1

func pack(seq uint64, st storage.State) uint64 { return seq<<stateBits | uint64(st) }

func unpack(w uint64) (uint64, storage.State) {
	return w >> stateBits, storage.State(w & (1<<stateBits - 1))
}

// table is a hash table of IDs built once: entries sorted by mix(ID),
// found through a directory of its top bits.
type table struct {
	ents  []tableEntry
	dir   []uint32 // entries dir[b] up to dir[b+1] have top bits b
	shift uint     // 64 minus the directory's bits
}

type tableEntry struct{ key, w uint64 } // key is mix(ID)

// mix (splitmix64's finalizer) spreads any IDs evenly over the directory.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// newTable builds the table of ids[i] → words[i].
func newTable(ids, words []uint64) table {
	if len(ids) == 0 {
		return table{}
	}
	bits := uint(max(1, bits.Len(uint(len(ids)))-1))
	t := table{ents: make([]tableEntry, len(ids)), dir: make([]uint32, 1<<bits+1), shift: 64 - bits}
	for _, id := range ids { // a counting sort on the top bits
		t.dir[mix(id)>>t.shift+1]++
	}
	for b := 1; b < len(t.dir); b++ {
		t.dir[b] += t.dir[b-1]
	}
	next := slices.Clone(t.dir[:len(t.dir)-1])
	for i, id := range ids {
		k := mix(id)
		b := k >> t.shift
		t.ents[next[b]] = tableEntry{k, words[i]}
		next[b]++
	}
	cmpKey := func(a, b tableEntry) int { return cmp.Compare(a.key, b.key) }
	for b := range len(t.dir) - 1 {
		if e := t.ents[t.dir[b]:t.dir[b+1]]; len(e) > 1 {
			slices.SortFunc(e, cmpKey)
		}
	}
	return t
}

func (t *table) find(id uint64) *uint64 {
	if len(t.ents) == 0 {
		return nil
	}
	k := mix(id)
	for i := t.dir[k>>t.shift]; i < t.dir[k>>t.shift+1]; i++ { // about two entries
		if t.ents[i].key == k {
			return &t.ents[i].w
		}
	}
	return nil
}

// loadIndex reads the index from the ID log and state index, cross-checked.
func loadIndex(tx *bbolt.Tx, path string, nextSeq uint64, counts *backend.Tally) (index, error) {
	total := 0
	for _, n := range counts {
		if n < 0 || int64(n) > tx.Size() {
			total = -1
			break
		}
		total += n
	}
	if nextSeq > maxSeq || total < 0 || int64(total) > tx.Size() {
		return index{}, corruptError(path, fmt.Sprintf("the counters say %d records and next Seq %d, which the file cannot hold", total, nextSeq), nil)
	}

	// The ID log, in Seq order, gives the IDs and Seqs; the state comes next.
	ids := make([]uint64, 0, total)
	words := make([]uint64, 0, total)
	c := tx.Bucket(bucketIDs).Cursor()
	next := uint64(1) // the lowest Seq the next run may start at
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return index{}, corruptError(path, fmt.Sprintf("an ID log key of %d bytes", len(k)), nil)
		}
		first := binary.BigEndian.Uint64(k)
		run, err := decodeIDRun(k, v)
		if err != nil {
			return index{}, corruptError(path, fmt.Sprintf("the ID run at Seq %d", first), err)
		}
		n := uint64(len(run) / 8)
		if first < next || first >= nextSeq || n > nextSeq-first {
			return index{}, corruptError(path, fmt.Sprintf("the ID run at Seq %d (%d IDs) overlaps another or reaches past the next Seq %d", first, n, nextSeq), nil)
		}
		if uint64(len(ids))+n > uint64(total) {
			return index{}, corruptError(path, fmt.Sprintf("the ID log holds more than the %d records the counts say", total), nil)
		}
		for i := range n {
			ids = append(ids, binary.BigEndian.Uint64(run[8*i:]))
			words = append(words, pack(first+i, 0))
		}
		next = first + n
	}
	if len(ids) != total {
		return index{}, corruptError(path, fmt.Sprintf("the ID log holds %d records, the counts %d", len(ids), total), nil)
	}

	// The state index: one section per state, each in Seq order.
	seqAt := func(i int) uint64 { return words[i] >> stateBits }
	var got backend.Tally
	sc := tx.Bucket(bucketStates).Cursor()
	pos, cur := 0, storage.State(0)
	for k, _ := sc.First(); k != nil; k, _ = sc.Next() {
		if len(k) != 9 || !storage.State(k[0]).Valid() {
			return index{}, corruptError(path, fmt.Sprintf("a state index key of %d bytes (%x)", len(k), k), nil)
		}
		st, seq := storage.State(k[0]), binary.BigEndian.Uint64(k[1:])
		if st != cur { // a new section: start at its first Seq
			cur = st
			pos = sort.Search(len(words), func(i int) bool { return seqAt(i) >= seq })
		}
		for pos < len(words) && seqAt(pos) < seq {
			pos++
		}
		if pos == len(words) || seqAt(pos) != seq {
			return index{}, corruptError(path, fmt.Sprintf("the state index names record %d, which the ID log lacks", seq), nil)
		}
		if _, was := unpack(words[pos]); was != 0 {
			return index{}, corruptError(path, fmt.Sprintf("record %d is in the state index twice (%v and %v)", seq, was, st), nil)
		}
		words[pos] |= uint64(st)
		got[st]++
	}
	// Each state entry found a distinct record: equal counts cover all.
	if got != *counts {
		return index{}, corruptError(path, fmt.Sprintf("stored counts %v differ from the state index %v", counts[1:], got[1:]), nil)
	}

	t := newTable(ids, words)
	for i := 1; i < len(t.ents); i++ { // an ID twice?
		if t.ents[i].key == t.ents[i-1].key {
			a, b := t.ents[i-1].w>>stateBits, t.ents[i].w>>stateBits
			return index{}, corruptError(path, fmt.Sprintf("one ID has two records (Seq %d and %d)", min(a, b), max(a, b)), nil)
		}
	}
	return index{loaded: t, added: make(map[uint64]uint64)}, nil
}
