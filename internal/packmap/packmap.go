// Package packmap keeps what a broad crawl holds by the million with few
// pointers for the garbage collector to mark: Map, a map from strings to
// short strings with no pointer per entry (they lie in a Buf's chunks,
// found by a hash of the key), for the per-domain records; Buf, byte
// values in shared chunks; Recent, a map bounded to the keys used last.
package packmap

import (
	"encoding/binary"
	"hash/maphash"
)

// Map maps strings to strings. The zero value is an empty map ready to use.
// It is not safe for concurrent use.
type Map struct {
	seed   maphash.Seed
	seeded bool
	index  map[uint64]entry  // hash of a key → where it and its value lie
	over   map[string]string // keys whose hash another key has (rare)
	buf    Buf               // each entry's key then value

	hashOf func(string) uint64 // tests: a hash of their own, to make keys collide
}

// entry is where a key and its value lie, in one chunk: the key's length
// and the value's as uvarints, then the key, then the value.
type entry struct{ chunk, off uint32 } // chunk: the chunk's index + 1

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

// parts returns e's key and value, in b, and the bytes e takes.
func parts(b *Buf, e entry) (key, value []byte, size int) {
	p := b.From(e.chunk, e.off)
	kl, n := binary.Uvarint(p)
	vl, n2 := binary.Uvarint(p[n:])
	k, v := n+n2, n+n2+int(kl)
	return p[k:v], p[v : v+int(vl)], v + int(vl)
}

// find returns key's entry, whether it has one (else it may be in over),
// and its hash.
func (m *Map) find(key string) (entry, bool, uint64) {
	h := m.hash(key)
	e, ok := m.index[h]
	if ok {
		k, _, _ := parts(&m.buf, e)
		ok = string(k) == key
	}
	return e, ok, h
}

// Get returns the value of key, and whether there is one.
func (m *Map) Get(key string) (string, bool) {
	if e, ok, _ := m.find(key); ok {
		_, v, _ := parts(&m.buf, e)
		return string(v), true
	}
	v, ok := m.over[key]
	return v, ok
}

// Set sets the value of key.
func (m *Map) Set(key, value string) {
	e, found, h := m.find(key)
	_, taken := m.index[h]
	_, inOver := m.over[key]
	switch {
	case found:
		m.drop(e)
	case taken || inOver: // another key has this hash, or had it
		if m.over == nil {
			m.over = make(map[string]string)
		}
		m.over[key] = value
		return
	}
	if m.index == nil {
		m.index = make(map[uint64]entry)
	}
	m.index[h] = m.place(key, value)
	if m.buf.Wasteful() {
		m.compact()
	}
}

// Delete removes key, if it is there.
func (m *Map) Delete(key string) {
	if e, ok, h := m.find(key); ok {
		m.drop(e)
		delete(m.index, h)
	} else {
		delete(m.over, key)
	}
}

// Range calls f for every key and its value, in no order, until f
// returns false. f must not change m.
func (m *Map) Range(f func(key, value string) bool) {
	for _, e := range m.index {
		if k, v, _ := parts(&m.buf, e); !f(string(k), string(v)) {
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
	var hdr [2 * binary.MaxVarintLen64]byte
	h := binary.AppendUvarint(binary.AppendUvarint(hdr[:0], uint64(len(key))), uint64(len(value)))
	c, off, dst := m.buf.Alloc(len(h) + len(key) + len(value))
	n := copy(dst, h)
	copy(dst[n+copy(dst[n:], key):], value)
	return entry{c, off}
}

// drop counts e's bytes as dead.
func (m *Map) drop(e entry) {
	_, _, n := parts(&m.buf, e)
	m.buf.Drop(n)
}

// compact copies the entries into new chunks.
func (m *Map) compact() {
	old := m.buf
	m.buf = Buf{}
	for h, e := range m.index {
		_, _, n := parts(&old, e)
		c, off, dst := m.buf.Alloc(n)
		copy(dst, old.From(e.chunk, e.off)[:n])
		m.index[h] = entry{c, off}
	}
}
