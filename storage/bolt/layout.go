package bolt

import (
	"encoding/binary"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/internal/backend"
)

// The file is one bbolt database with six top-level buckets. The Store
// type's documentation tells the story; this file is the single place that
// names them.
const (
	// formatVersion is the layout this build writes and the only one it
	// reads. Format 1 (the request inside the record, an ID index keyed
	// by ID) was written by development builds only.
	formatVersion uint32 = 2
	// formatMagic marks a bbolt file as a Breakwater checkpoint.
	formatMagic = "breakwater checkpoint"
)

var (
	// bucketFormat holds keyMagic, keyFormat, keyNextSeq and keyCounts.
	bucketFormat = []byte("breakwater")
	// bucketRecords maps seqKey(Seq) to an encoded record, without its
	// request: the frontier in order, so a full scan is one sequential
	// cursor walk.
	bucketRecords = []byte("records")
	// bucketRequests maps seqKey(Seq) to the record's encoded request,
	// for records whose Request is not nil. Written when the request is
	// new or changed, not with every state change.
	bucketRequests = []byte("requests")
	// bucketIDs is the ID log: seqKey(first Seq of a run) to the IDs of
	// the records with that Seq and the next ones (an ID run). Each
	// commit appends the runs of the records it creates; nothing else
	// writes it. Open reads it into the in-memory index (index.go).
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

// stateKey is the states index key: the state byte, then the Seq.
func stateKey(st storage.State, seq uint64) []byte {
	return stateKeyAppend(make([]byte, 0, 9), st, seq)
}

// stateKeyAppend appends stateKey(st, seq) to b.
func stateKeyAppend(b []byte, st storage.State, seq uint64) []byte {
	return putU64(append(b, byte(st)), seq)
}

func encodeCounts(c *backend.Tally) []byte {
	b := make([]byte, 0, countsLen)
	for st := storage.Pending; st <= storage.Dead; st++ {
		b = putU64(b, uint64(c[st]))
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
