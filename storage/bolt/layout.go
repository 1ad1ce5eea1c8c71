package bolt

import (
	"encoding/binary"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/internal/backend"
)

// The file's buckets and keys (docs/checkpoints.md describes them).
const (
	// formatVersion is the only layout this build writes and reads.
	formatVersion uint32 = 2
	formatMagic          = "breakwater checkpoint"
)

var (
	bucketFormat   = []byte("breakwater") // keyMagic, keyFormat, keyNextSeq, keyCounts
	bucketRecords  = []byte("records")    // seqKey → record without its request
	bucketRequests = []byte("requests")   // seqKey → request, for a non-nil Request
	bucketIDs      = []byte("ids")        // seqKey of a run's first Seq → its IDs: the ID log
	bucketStates   = []byte("states")     // stateKey → empty: the (state, seq) index
	bucketMeta     = []byte("meta")       // metadata key → value

	keyMagic   = []byte("magic")
	keyFormat  = []byte("format")  // formatVersion, 4 bytes big-endian
	keyNextSeq = []byte("nextseq") // next Seq to assign, 8 bytes big-endian
	keyCounts  = []byte("counts")  // records per state, 6 × 8 bytes big-endian

	empty = []byte{}
)

const countsLen = 8 * int(storage.Dead)

// seqKey is the records key of a Seq: big-endian, so keys sort by Seq.
func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), seq) }

// stateKeyAppend appends the states index key of (st, seq) to b.
func stateKeyAppend(b []byte, st storage.State, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(b, byte(st)), seq)
}

func encodeCounts(c *backend.Tally) []byte {
	b := make([]byte, 0, countsLen)
	for st := storage.Pending; st <= storage.Dead; st++ {
		b = binary.BigEndian.AppendUint64(b, uint64(c[st]))
	}
	return b
}

func decodeCounts(b []byte, c *backend.Tally) bool {
	if len(b) != countsLen {
		return false
	}
	for st := storage.Pending; st <= storage.Dead; st++ {
		c[st] = int(binary.BigEndian.Uint64(b[8*(int(st)-1):]))
	}
	return true
}
