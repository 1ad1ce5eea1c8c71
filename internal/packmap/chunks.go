package packmap

// Chunks start at firstSize bytes and double up to maxSize.
const (
	firstSize = 1 << 10
	maxSize   = 1 << 16
)

// Buf keeps byte values in large shared chunks, referred to by numbers
// instead of pointers, so the garbage collector marks a few chunks instead
// of every value: a Map's entries, storage/memory's records. The zero
// value is ready to use. It is not safe for concurrent use.
type Buf struct {
	chunks [][]byte
	live   int // bytes in use
	dead   int // bytes no longer in use
}

// Alloc makes room for n > 0 bytes and returns where they lie (chunk is
// the chunk's index + 1) and the bytes to copy the value into.
func (b *Buf) Alloc(n int) (chunk, off uint32, dst []byte) {
	last := len(b.chunks) - 1
	if last < 0 || cap(b.chunks[last])-len(b.chunks[last]) < n {
		size := firstSize
		if last >= 0 {
			size = min(2*cap(b.chunks[last]), maxSize)
		}
		b.chunks = append(b.chunks, make([]byte, 0, max(size, n)))
		last++
	}
	c := b.chunks[last]
	b.chunks[last] = c[:len(c)+n]
	b.live += n
	return uint32(last) + 1, uint32(len(c)), c[len(c) : len(c)+n : len(c)+n]
}

// Bytes returns the n bytes at chunk and off, backed by the Buf.
func (b *Buf) Bytes(chunk, off, n uint32) []byte {
	if n == 0 {
		return nil
	}
	return b.chunks[chunk-1][off : off+n : off+n]
}

// From returns the bytes of chunk from off on, backed by the Buf.
func (b *Buf) From(chunk, off uint32) []byte { return b.chunks[chunk-1][off:] }

// Drop counts n bytes as no longer in use.
func (b *Buf) Drop(n int) {
	b.live -= n
	b.dead += n
}

// Wasteful reports whether copying the live bytes into a new Buf is due:
// dead bytes outnumber the live ones and a full chunk.
func (b *Buf) Wasteful() bool { return b.dead > b.live && b.dead > maxSize }

// Held returns the bytes in use and those no longer in use, for tests.
func (b *Buf) Held() (live, dead, total int) {
	for _, c := range b.chunks {
		total += len(c)
	}
	return b.live, b.dead, total
}
