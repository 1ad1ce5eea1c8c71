// Package packmap is a map from strings to short strings with no pointer
// per entry (they lie in package chunks, found by a hash of the key), for
// the per-domain records a broad crawl keeps by the million.
package packmap

import (
	"hash/maphash"
	"math"

	"github.com/breakwater-crawl/breakwater/internal/chunks"
)

// Map maps strings to strings. The zero value is an empty map ready to use.
// It is not safe for concurrent use.
type Map struct {
	seed   maphash.Seed
	seeded bool
	index  map[uint64]uint32 // hash of a key → its entry
	ents   []entry
	free   []uint32          // entries not in use
	over   map[string]string // keys whose hash another key has (rare)
	buf    chunks.Buf        // each entry's key then value

	hashOf func(string) uint64 // tests: a hash of their own, to make keys collide
}

// entry is where a key and its value lie: key then value, in one chunk.
// A key or value longer than maxLen is kept in over instead.
type entry struct {
	chunk      uint32 // the chunk's index + 1; 0 for an entry not in use
	off        uint32
	klen, vlen uint16
}

const maxLen = math.MaxUint16

func (e *entry) used() bool { return e.chunk != 0 }

// noBytes is the chunk of an entry in use with an empty key and value.
const noBytes = math.MaxUint32

// Len returns the number of keys.
func (m *Map) Len() int { return len(m.index) + len(m.over) }

func (m *Map) hash(key string) uint64 {
	if m.hashOf != nil {
		return m.hashOf(key)
	}
	if !m.seeded {
		m.seed, m.seeded = maphash.MakeSeed(), true
	}
	return maphash.String(m.seed, key)
}

func (m *Map) bytes(e *entry) []byte {
	return m.buf.Bytes(e.chunk, e.off, uint32(e.klen)+uint32(e.vlen))
}

func (m *Map) key(e *entry) []byte { return m.bytes(e)[:e.klen] }

func (m *Map) value(e *entry) []byte { return m.bytes(e)[e.klen:] }

// find returns key's entry (nil if none: it may be in over) and its hash.
func (m *Map) find(key string) (*entry, uint64) {
	h := m.hash(key)
	if i, ok := m.index[h]; ok {
		if e := &m.ents[i]; string(m.key(e)) == key {
			return e, h
		}
	}
	return nil, h
}

// Get returns the value of key, and whether there is one.
func (m *Map) Get(key string) (string, bool) {
	if e, _ := m.find(key); e != nil {
		return string(m.value(e)), true
	}
	v, ok := m.over[key]
	return v, ok
}

// Set sets the value of key.
func (m *Map) Set(key, value string) {
	e, h := m.find(key)
	switch _, other := m.index[h]; {
	case e != nil && len(key) <= maxLen && len(value) <= maxLen:
		m.release(e)
		*e = m.place(key, value)
	case e != nil:
		m.Delete(key)
		m.setOver(key, value)
		return
	case other || len(key) > maxLen || len(value) > maxLen:
		// Another key has this hash, or the entry is too long for one.
		m.setOver(key, value)
		return
	default:
		if _, ok := m.over[key]; ok {
			m.over[key] = value
			return
		}
		var i uint32
		if n := len(m.free); n > 0 {
			i, m.free = m.free[n-1], m.free[:n-1]
		} else {
			m.ents = append(m.ents, entry{})
			i = uint32(len(m.ents) - 1)
		}
		m.ents[i] = m.place(key, value)
		if m.index == nil {
			m.index = make(map[uint64]uint32)
		}
		m.index[h] = i
	}
	if m.buf.Wasteful() {
		m.compact()
	}
}

func (m *Map) setOver(key, value string) {
	if m.over == nil {
		m.over = make(map[string]string)
	}
	m.over[key] = value
}

// Delete removes key, if it is there.
func (m *Map) Delete(key string) {
	e, h := m.find(key)
	if e == nil {
		delete(m.over, key)
		return
	}
	m.release(e)
	i := m.index[h]
	delete(m.index, h)
	*e = entry{}
	m.free = append(m.free, i)
}

// Range calls f for every key and its value, in no order, until f
// returns false. f must not change m.
func (m *Map) Range(f func(key, value string) bool) {
	for i := range m.ents {
		if e := &m.ents[i]; e.used() && !f(string(m.key(e)), string(m.value(e))) {
			return
		}
	}
	for k, v := range m.over {
		if !f(k, v) {
			return
		}
	}
}

// place writes key and value into the chunks.
func (m *Map) place(key, value string) entry {
	n := len(key) + len(value)
	if n == 0 {
		return entry{chunk: noBytes}
	}
	c, off, dst := m.buf.Alloc(n)
	copy(dst[copy(dst, key):], value)
	return entry{chunk: c, off: off, klen: uint16(len(key)), vlen: uint16(len(value))}
}

// release counts e's bytes as dead.
func (m *Map) release(e *entry) { m.buf.Drop(int(e.klen) + int(e.vlen)) }

// compact copies the entries in use into new chunks.
func (m *Map) compact() {
	old := m.buf
	m.buf = chunks.Buf{}
	for i := range m.ents {
		e := &m.ents[i]
		if !e.used() || e.chunk == noBytes {
			continue
		}
		n := uint32(e.klen) + uint32(e.vlen)
		c, off, dst := m.buf.Alloc(int(n))
		copy(dst, old.Bytes(e.chunk, e.off, n))
		e.chunk, e.off = c, off
	}
}
