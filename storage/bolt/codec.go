package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
)

// The encodings are in docs/checkpoints.md.
const (
	recordVersion = 2
	headerLen     = 1 + 1 + 8
	crcLen        = 4
	// unixToYear1 is the number of seconds from 0001-01-01 to 1970-01-01.
	unixToYear1 = 62135596800
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBadRecord reports a record value that does not decode.
var errBadRecord = errors.New("record does not decode")

// encode appends the encoding of r, without its request, to dst.
func encode(dst []byte, r *storage.Record) []byte {
	b := append(dst, recordVersion, byte(r.State))
	b = binary.BigEndian.AppendUint64(b, r.ID)
	b = binary.AppendUvarint(b, uint64(r.Attempts))
	b = appendTime(b, r.NotBefore)
	b = appendTime(b, r.Updated)
	b = binary.AppendUvarint(b, uint64(len(r.URL)))
	b = append(b, r.URL...)
	b = binary.AppendUvarint(b, uint64(len(r.LastError)))
	b = append(b, r.LastError...)
	if r.Request == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[len(dst):], castagnoli))
}

// encodedLen is len(encode(nil, r)).
func encodedLen(r *storage.Record) int {
	return headerLen + uvarintLen(uint64(r.Attempts)) + timeLen(r.NotBefore) + timeLen(r.Updated) +
		uvarintLen(uint64(len(r.URL))) + len(r.URL) + uvarintLen(uint64(len(r.LastError))) + len(r.LastError) +
		1 + crcLen
}

// encodeRequest appends the request value of req, under key, to dst.
func encodeRequest(dst, key, req []byte) []byte {
	return binary.BigEndian.AppendUint32(append(dst, req...), keyedCRC(key, req))
}

// decodeRequest returns a checked copy of the request in value v under key.
func decodeRequest(key, v []byte) ([]byte, error) {
	body, err := checked(key, v)
	if err != nil {
		return nil, fmt.Errorf("%w: its request: %w", errBadRecord, err)
	}
	return append(make([]byte, 0, len(body)), body...), nil
}

// encodeIDRun appends the ID run value of ids, under key, to dst.
func encodeIDRun(dst, key []byte, ids []uint64) []byte {
	b := dst
	for _, id := range ids {
		b = binary.BigEndian.AppendUint64(b, id)
	}
	return binary.BigEndian.AppendUint32(b, keyedCRC(key, b[len(dst):]))
}

// decodeIDRun returns the checked IDs of run v under key, as 8-byte words in v.
func decodeIDRun(key, v []byte) ([]byte, error) {
	body, err := checked(key, v)
	if err == nil && (len(body) == 0 || len(body)%8 != 0) {
		err = fmt.Errorf("%d bytes of IDs, not a positive multiple of 8", len(body))
	}
	return body, err
}

func keyedCRC(key, body []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, body)
}

// checked returns v without its trailing keyed CRC-32C, if that matches.
func checked(key, v []byte) ([]byte, error) {
	if len(v) < crcLen {
		return nil, fmt.Errorf("%d bytes, shorter than a checksum", len(v))
	}
	body, sum := v[:len(v)-crcLen], binary.BigEndian.Uint32(v[len(v)-crcLen:])
	if keyedCRC(key, body) != sum {
		return nil, errors.New("checksum mismatch")
	}
	return body, nil
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

func varintLen(v int64) int { return uvarintLen(uint64(v<<1 ^ v>>63)) } // zigzag, as binary.AppendVarint

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0, 0)
	}
	b = binary.AppendVarint(b, t.Unix()+unixToYear1)
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

func timeLen(t time.Time) int {
	if t.IsZero() {
		return 2
	}
	return varintLen(t.Unix()+unixToYear1) + uvarintLen(uint64(t.Nanosecond()))
}

// peek returns an encoded record's state and ID, checking nothing more.
func peek(v []byte) (storage.State, uint64, error) {
	if len(v) < headerLen+1+crcLen {
		return 0, 0, fmt.Errorf("%w: %d bytes, shorter than any record", errBadRecord, len(v))
	}
	if v[0] != recordVersion {
		return 0, 0, versionError(v[0])
	}
	st := storage.State(v[1])
	if !st.Valid() {
		return 0, 0, fmt.Errorf("%w: invalid state byte %d", errBadRecord, v[1])
	}
	return st, binary.BigEndian.Uint64(v[2:]), nil
}

// verify checks a record's header, checksum and request flag (no allocation).
func verify(v []byte) (hasReq bool, err error) {
	if _, _, err := peek(v); err != nil {
		return false, err
	}
	body, sum := v[:len(v)-crcLen], binary.BigEndian.Uint32(v[len(v)-crcLen:])
	if crc32.Checksum(body, castagnoli) != sum {
		return false, fmt.Errorf("%w: checksum mismatch", errBadRecord)
	}
	switch flag := body[len(body)-1]; flag {
	case 0, 1:
		return flag == 1, nil
	default:
		return false, fmt.Errorf("%w: request flag %d", errBadRecord, flag)
	}
}

func versionError(v byte) error {
	if v > recordVersion {
		return fmt.Errorf("%w: record encoding version %d, this build reads up to %d", storage.ErrNewerFormat, v, recordVersion)
	}
	return fmt.Errorf("%w: unknown record encoding version %d", errBadRecord, v)
}

// decode decodes a record (sharing no memory with v), and its request flag.
func decode(v []byte, seq uint64) (storage.Record, bool, error) {
	hasReq, err := verify(v)
	if err != nil {
		return storage.Record{}, false, err
	}
	d := decoder{b: v[headerLen : len(v)-crcLen-1]} // up to the request flag
	r := storage.Record{ID: binary.BigEndian.Uint64(v[2:]), State: storage.State(v[1]), Seq: seq}
	attempts := d.uvarint()
	if attempts > math.MaxInt {
		d.fail("attempts out of range")
	}
	r.Attempts = int(attempts)
	r.NotBefore = d.time()
	r.Updated = d.time()
	r.URL = string(d.bytes(d.uvarint()))
	r.LastError = string(d.bytes(d.uvarint()))
	if d.err == nil && len(d.b) != 0 {
		d.fail(fmt.Sprintf("%d trailing bytes", len(d.b)))
	}
	if d.err != nil {
		return storage.Record{}, false, d.err
	}
	return r, hasReq, nil
}

// decoder reads varints and byte strings, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errBadRecord, what)
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varint undoes binary.AppendVarint's zigzag.
func (d *decoder) varint() int64 { u := d.uvarint(); return int64(u>>1) ^ -int64(u&1) }

func (d *decoder) bytes(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail(fmt.Sprintf("length %d past the end", n))
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) time() time.Time {
	sec, nsec := d.varint(), d.uvarint()
	if nsec >= 1e9 {
		d.fail("nanoseconds out of range")
	}
	if d.err != nil || (sec == 0 && nsec == 0) {
		return time.Time{}
	}
	return time.Unix(sec-unixToYear1, int64(nsec)).UTC()
}
