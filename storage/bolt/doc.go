// Package bolt is the embedded, single-file storage.Store: Breakwater's
// default checkpoint, on go.etcd.io/bbolt.
//
//	s, err := bolt.Open("crawl.db")
//	if err != nil {
//		return err // *FileError: which file, what is wrong, what to do
//	}
//	defer s.Close()
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
//   - a checkpoint of a newer format: storage.ErrNewerFormat;
//   - open in another process (or another Store): storage.ErrLocked,
//     after the lock timeout (1 s by default).
//
// The open-time check is structural (bbolt's meta pages, the file length,
// Breakwater's buckets and format version, the first and last record);
// WithVerify adds bbolt's full page check and decodes every record. bbolt
// can panic, or fault on the mapped file, when it meets a damaged page;
// every method recovers that at its boundary and returns ErrCorrupt
// instead, and records carry a CRC-32C so that damage bbolt cannot see is
// caught too.
//
// # On-disk layout
//
// One bbolt database (format 1) with five buckets:
//
//	breakwater  magic "breakwater checkpoint", format (uint32), nextseq (uint64),
//	            counts (records per state, 6 × uint64); all big-endian
//	records     seq (8 bytes BE) → record (see below)
//	ids         id (8 bytes BE)  → seq (8 bytes BE); written once per record
//	states      state (1 byte) + seq (8 bytes BE) → empty: the (state, seq) index
//	meta        key → value
//
// A record is version byte 1, state byte, id (8 bytes BE), then varints:
// attempts, NotBefore and Updated (seconds since year 1, nanoseconds),
// URL, LastError and Request (each length-prefixed; Request's length is
// stored plus one so that nil survives), and a CRC-32C of all of it.
//
// Records are keyed by Seq, so the frontier is stored in order and a state
// change rewrites the record in place: it touches the record's page, two
// entries of the state index near each other, and never the ID index,
// whose random keys are written once. Scanning the non-done frontier walks
// the state index and reads only the records it names; no done record is
// read or decoded. Get is two lookups (ids, then records).
package bolt
