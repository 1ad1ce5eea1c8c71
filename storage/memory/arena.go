package memory

import "github.com/breakwater-crawl/breakwater/internal/chunks"

// arena holds the records' variable-length parts (URL, last error,
// request) as bytes in shared chunks, so that a record itself holds no
// pointer: the garbage collector marks a few chunks instead of looking
// into every record, which in a crawl of millions of URLs is most of its
// work. The bytes a replaced value no longer uses are counted as dead,
// and the store compacts when they outnumber the live ones.
type arena struct{ buf chunks.Buf }

// span is where a value lies in the arena. A span of length 0 takes no
// room; set tells a nil value from an empty one.
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

// bytes returns the bytes of sp, backed by the arena: copy them before
// the store's lock is let go.
func (a *arena) bytes(sp span) []byte { return a.buf.Bytes(sp.chunk, sp.off, sp.n) }

// clone returns a copy of the value at sp: nil for a value never set.
func (a *arena) clone(sp span) []byte {
	if !sp.set {
		return nil
	}
	return append([]byte{}, a.bytes(sp)...)
}

// str returns the value at sp as a string of its own.
func (a *arena) str(sp span) string { return string(a.bytes(sp)) }

// set makes *sp hold v (set is false for a nil value). A record's URL
// and request seldom change between its states: a value that is the same
// keeps its bytes. (A new record's spans are zero: nothing to drop.)
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
