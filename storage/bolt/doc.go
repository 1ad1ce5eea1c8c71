// Package bolt is the embedded, single-file storage.Store: Breakwater's
// default checkpoint, on go.etcd.io/bbolt.
//
//	s, err := bolt.Open("crawl.db")
//	if err != nil {
//		return err // *FileError: which file, what is wrong, what to do
//	}
//	defer s.Close() // after the checkpoint's Close
//	cp, err := checkpoint.New(s)
//
// # Durability
//
// Put and SetMeta write to an in-memory buffer (the latest write per ID
// wins) and return. Reads (Get, Scan, Counts, Meta) see the buffer at once.
// A background loop commits the buffer in one bbolt transaction every
// flush interval (50 ms by default), or as soon as a batch (10,000 records
// and metadata entries by default) has accumulated. bbolt fsyncs each
// commit before it returns. So:
//
//   - A Put is durable once Flush returns nil, or once Close returns nil.
//   - Without Flush, a Put is durable after the next background commit:
//     normally at most one flush interval plus one commit after Put
//     returned (about 50 ms).
//   - Every commit is atomic. A crash (kill -9, power loss) leaves the file
//     as of the last completed commit: each record whole, in the state it
//     had then, with the indexes and counts that match. Nothing committed
//     is lost and nothing half-written is seen.
//   - If a commit fails (disk full, I/O error), the error is sticky: this
//     and every later Put, SetMeta and Flush return it (a *FileError naming
//     the file), reads go on working from memory, and the file keeps the
//     last successful commit. Reopen it once the cause is fixed.
//
// Put blocks while four batches are buffered and a commit is running,
// so a crawl faster than its disk is slowed rather than let memory grow
// without bound.
//
// # Opening
//
// Open creates a missing file under a temporary name and links it into
// place when it is a complete empty checkpoint. An existing file is
// inspected read-only first, and Open refuses, without writing a byte to
// it, a file that is
//
//   - empty, truncated (shorter than its pages say) or otherwise damaged:
//     storage.ErrCorrupt;
//   - not a bbolt database, or a bbolt database that is not a checkpoint:
//     storage.ErrNotCheckpoint;
//   - a checkpoint of a newer format: storage.ErrNewerFormat; one of
//     format 1, which only development builds wrote: storage.ErrNotCheckpoint;
//   - open in another process (or another Store): storage.ErrLocked,
//     after the lock timeout (1 s by default).
//
// The open-time check, read-only, covers bbolt's meta pages, the file
// length, Breakwater's buckets and format version, and every record and
// request: each one's CRC-32C, a request stored for exactly the records
// that say they have one, as many records as the counts say (about 0.15 s
// for a checkpoint of 1,000,000 URLs). Then Open reads the ID log and the
// state index into memory and refuses the file (storage.ErrCorrupt,
// nothing written) if they disagree with each other or with the counts.
// So a damaged file is refused before a byte of it is written, wherever
// the damage is. WithVerify adds bbolt's full page check, decodes every
// record and request and checks each against the index. bbolt can panic,
// or fault on the mapped file, when it meets a damaged page; every method
// recovers that at its boundary and returns ErrCorrupt instead. Damage
// that appears while the store has the file open (a failing disk) is
// caught by the CRC-32C when the value is read; that error's hint does
// not say the file was left as it is, since the store may have committed
// to it since Open.
//
// # Memory
//
// The store keeps every record's ID, Seq and state in memory (about 18
// bytes a record loaded at Open, 20 to 40 for one created since; 20 to
// 40 MB for a crawl of 1,000,000 URLs), besides what is buffered. So Put
// reads nothing from the file, and Get of an ID the store does not hold,
// the question a crawler asks of every new link, does not either.
//
// # On-disk layout
//
// One bbolt database (format 2) with six buckets:
//
//	breakwater  magic "breakwater checkpoint", format (uint32), nextseq (uint64),
//	            counts (records per state, 6 × uint64); all big-endian
//	records     seq (8 bytes BE) → record (see below)
//	requests    seq (8 bytes BE) → request, for records whose Request is not nil
//	ids         seq (8 bytes BE) → the IDs (8 bytes BE each) of the records
//	            from that Seq on, created by one commit: the ID log
//	states      state (1 byte) + seq (8 bytes BE) → empty: the (state, seq) index
//	meta        key → value
//
// A record is version byte 2, state byte, id (8 bytes BE), then varints:
// attempts, NotBefore and Updated (seconds since year 1, nanoseconds),
// URL and LastError (each length-prefixed), a byte saying whether the
// record has a request, and a CRC-32C of all of it. A request value and an
// ID log value end with a CRC-32C of their key and content.
//
// Records are keyed by Seq, so the frontier is stored in order and a state
// change rewrites the record in place: it touches the record's page, two
// entries of the state index near each other, and neither the request,
// which is written again only when it changes, nor the ID log, which each
// commit appends to. Scanning the non-done frontier walks the state index
// and reads only the records it names, and their requests; no done record
// is read or decoded. Get of a committed record is two lookups by Seq
// (records, then requests).
package bolt
