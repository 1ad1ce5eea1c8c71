package packmap

import "strings"

// Recent is a map bounded to the keys used last, in two generations: a
// full recent one becomes the older one, dropping its keys. It keeps the
// values of the Size to 2×Size keys used last. It is not safe for
// concurrent use.
type Recent[V any] struct {
	// Size is how many keys a generation holds.
	Size int
	// KeepAll stops the dropping.
	KeepAll bool

	cur, old map[string]V
}

// NewRecent returns a Recent of size keys a generation.
func NewRecent[V any](size int) Recent[V] { return Recent[V]{Size: size} }

// Get returns k's value, and whether the map has it, moving it to the
// recent generation.
func (m *Recent[V]) Get(k string) (V, bool) {
	if v, ok := m.cur[k]; ok {
		return v, true
	}
	v, ok := m.old[k]
	if ok {
		m.Put(k, v)
	}
	return v, ok
}

// Has reports whether the map has k, without moving it (a read only).
func (m *Recent[V]) Has(k string) bool {
	if _, ok := m.cur[k]; ok {
		return true
	}
	_, ok := m.old[k]
	return ok
}

// Put sets k's value in the recent generation; a new key is copied.
func (m *Recent[V]) Put(k string, v V) {
	if _, ok := m.cur[k]; !ok {
		delete(m.old, k)
		k = strings.Clone(k)
		if m.cur == nil {
			m.cur = make(map[string]V)
		} else if len(m.cur) >= m.Size && !m.KeepAll {
			m.old, m.cur = m.cur, make(map[string]V, len(m.cur))
		}
	}
	m.cur[k] = v
}

// Delete removes k.
func (m *Recent[V]) Delete(k string) {
	delete(m.cur, k)
	delete(m.old, k)
}

// Len returns the number of keys held.
func (m *Recent[V]) Len() int { return len(m.cur) + len(m.old) }
