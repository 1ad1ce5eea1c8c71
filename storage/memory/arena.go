package memory

import "github.com/breakwater-crawl/breakwater/internal/packmap"

// arena holds the records' URLs, errors and requests in shared chunks, so
// that a record holds no pointer for the garbage collector to follow.
// Replaced values count as dead bytes; the store compacts when they
// outnumber the live ones.
type arena struct{ buf packmap.Buf }

// span is where a value lies in the arena; set tells nil from empty.
type span struct {
	chunk, off, n uint32
	set           bool
}

// put appends v and returns its span; set is false for a nil value.
func put[T string | []byte](a *arena, v T, set bool) span {
	if len(v) == 0 {
		return span{set: set}
	}
	c, off, dst := a.buf.Alloc(len(v))
	copy(dst, v)
	return span{chunk: c, off: off, n: uint32(len(v)), set: true}
}

// bytes returns the bytes of sp, in the arena: copy them before unlocking.
func (a *arena) bytes(sp span) []byte { return a.buf.Bytes(sp.chunk, sp.off, sp.n) }

// clone returns a copy of the value at sp: nil for a value never set.
func (a *arena) clone(sp span) []byte {
	if !sp.set {
		return nil
	}
	return append([]byte{}, a.bytes(sp)...)
}

// set makes *sp hold v (isSet false for nil); an unchanged value keeps
// its bytes.
func set[T string | []byte](a *arena, sp *span, v T, isSet bool) {
	if sp.set == isSet && string(a.bytes(*sp)) == string(v) {
		return
	}
	a.buf.Drop(int(sp.n))
	*sp = put(a, v, isSet)
}

// keep copies the value at sp in from, and returns its span here.
func (a *arena) keep(from *arena, sp span) span {
	if sp.n == 0 {
		return sp
	}
	return put(a, from.bytes(sp), true)
}
