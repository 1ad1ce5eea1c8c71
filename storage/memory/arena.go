package memory

import "bytes"

// arena holds the records' variable-length parts (URL, last error,
// request) as bytes in large chunks, so that a record itself holds no
// pointer: the garbage collector marks a few chunks instead of looking
// into every record, which in a crawl of millions of URLs is most of its
// work. Spans are only ever appended; the bytes a replaced record no longer
// uses are counted as dead, and the store compacts when they outnumber the
// live ones.
type arena struct {
	chunks [][]byte
	live   int // bytes that records use
	dead   int // bytes no record uses any more
}

// chunkSize is the capacity of an arena chunk; a value longer than that
// gets a chunk of its own.
const chunkSize = 1 << 20

// span is where a value lies in the arena. A span of length 0 takes no
// room; set tells a nil value from an empty one.
type span struct {
	chunk, off, n uint32
	set           bool
}

// put appends b and returns its span.
func (a *arena) put(b []byte) span {
	if len(b) == 0 {
		return span{set: b != nil}
	}
	i := a.room(len(b))
	sp := span{chunk: uint32(i), off: uint32(len(a.chunks[i])), n: uint32(len(b)), set: true}
	a.chunks[i] = append(a.chunks[i], b...)
	a.live += len(b)
	return sp
}

// putString appends s and returns its span, set (an empty string is a
// value too).
func (a *arena) putString(s string) span {
	if len(s) == 0 {
		return span{set: true}
	}
	i := a.room(len(s))
	sp := span{chunk: uint32(i), off: uint32(len(a.chunks[i])), n: uint32(len(s)), set: true}
	a.chunks[i] = append(a.chunks[i], s...)
	a.live += len(s)
	return sp
}

// room returns the chunk that n more bytes go to, adding one if the last
// has no room for them.
func (a *arena) room(n int) int {
	last := len(a.chunks) - 1
	if last < 0 || cap(a.chunks[last])-len(a.chunks[last]) < n {
		a.chunks = append(a.chunks, make([]byte, 0, max(chunkSize, n)))
		last++
	}
	return last
}

// bytes returns the bytes of sp, backed by the arena: copy them before
// the store's lock is let go.
func (a *arena) bytes(sp span) []byte {
	if sp.n == 0 {
		return nil
	}
	return a.chunks[sp.chunk][sp.off : sp.off+sp.n : sp.off+sp.n]
}

// clone returns a copy of the value at sp: nil for a value never set.
func (a *arena) clone(sp span) []byte {
	if !sp.set {
		return nil
	}
	return append([]byte{}, a.bytes(sp)...)
}

// str returns the value at sp as a string of its own.
func (a *arena) str(sp span) string { return string(a.bytes(sp)) }

// setString makes *sp hold s, set. A record's URL and request seldom
// change between its states: a value that is the same keeps its bytes.
// (A new record's spans are zero: nothing to drop.)
func (a *arena) setString(sp *span, s string) {
	if sp.set && string(a.bytes(*sp)) == s {
		return
	}
	a.drop(*sp)
	*sp = a.putString(s)
}

// setBytes makes *sp hold b, nil and empty told apart, as setString does.
func (a *arena) setBytes(sp *span, b []byte) {
	if sp.set == (b != nil) && bytes.Equal(a.bytes(*sp), b) {
		return
	}
	a.drop(*sp)
	*sp = a.put(b)
}

// keep copies the value at sp in from, and returns its span here.
func (a *arena) keep(from *arena, sp span) span {
	if sp.n == 0 {
		return sp
	}
	return a.put(from.bytes(sp))
}

// drop counts sp's bytes as dead.
func (a *arena) drop(sp span) {
	a.live -= int(sp.n)
	a.dead += int(sp.n)
}

// wasteful reports whether compacting is due: the dead bytes are more
// than the live ones and more than a chunk, so that compacting, which
// copies the live bytes, costs a constant per byte written.
func (a *arena) wasteful() bool {
	return a.dead > a.live && a.dead > chunkSize
}
