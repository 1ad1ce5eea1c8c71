package bolt

import (
	"encoding/binary"

	"github.com/breakwater-crawl/breakwater/storage"
)

// The file is one bbolt database with five top-level buckets. See doc.go
// for the story; this file is the single place that names them.
const (
	// formatVersion is the layout this build writes and the newest it reads.
	formatVersion uint32 = 1
	// formatMagic marks a bbolt file as a Breakwater checkpoint.
	formatMagic = "breakwater checkpoint"
)

var (
	// bucketFormat holds keyMagic, keyFormat, keyNextSeq and keyCounts.
	bucketFormat = []byte("breakwater")
	// bucketRecords maps seqKey(Seq) to an encoded record: the frontier
	// in order, so a full scan is one sequential cursor walk.
	bucketRecords = []byte("records")
	// bucketIDs maps idKey(ID) to seqKey(Seq). Written once per record,
	// on its first commit; state changes never touch it.
	bucketIDs = []byte("ids")
	// bucketStates is the (state, seq) index: stateKey(State, Seq) with an
	// empty value. Scanning the non-done frontier walks these keys and
	// never reads a done record.
	bucketStates = []byte("states")
	// bucketMeta maps metadata keys to values.
	bucketMeta = []byte("meta")

	keyMagic   = []byte("magic")
	keyFormat  = []byte("format")  // formatVersion, 4 bytes big-endian
	keyNextSeq = []byte("nextseq") // next Seq to assign, 8 bytes big-endian
	keyCounts  = []byte("counts")  // records per state, 6 × 8 bytes big-endian

	empty = []byte{}
)

const countsLen = 8 * int(storage.Dead)

func putU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

// seqKey is the records key of a Seq: big-endian, so keys sort by Seq.
func seqKey(seq uint64) []byte { return putU64(make([]byte, 0, 8), seq) }

// idKey is the ids key of an ID.
func idKey(id uint64) []byte { return putU64(make([]byte, 0, 8), id) }

// stateKey is the states index key: the state byte, then the Seq.
func stateKey(st storage.State, seq uint64) []byte {
	return putU64(append(make([]byte, 0, 9), byte(st)), seq)
}

func encodeCounts(c *storage.Tally) []byte {
	b := make([]byte, 0, countsLen)
	for st := storage.Pending; st <= storage.Dead; st++ {
		b = putU64(b, uint64(c[st]))
	}
	return b
}

func decodeCounts(b []byte, c *storage.Tally) bool {
	if len(b) != countsLen {
		return false
	}
	for st := storage.Pending; st <= storage.Dead; st++ {
		c[st] = int(binary.BigEndian.Uint64(b[8*(int(st)-1):]))
	}
	return true
}
