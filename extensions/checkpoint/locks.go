package checkpoint

import "sync"

// Locking. The checkpoint is called by every request's goroutine several
// times a page; a process-wide mutex there made a broad crawl's goroutines
// queue behind one another (issue 26). So:
//
//   - a request's entry is found in a sharded table (live.go);
//   - a record's read, state change and write happen under its stripe,
//     one of idStripes locks chosen by the record's ID: two requests of
//     one URL (a re-send, a revisit) still write in order;
//   - writes go to a sharded buffer the first callback to end puts into
//     the store in one batch (commit.go);
//   - the held final records (bmu), the visited set's announcements (vmu),
//     the re-send and redirect URLs (rmu), the outage memory (omu) and the
//     store's first error (emu) have short locks of their own;
//   - mu is for the rest: the frontier, the run, the saved circuits, and
//     the outcomes that touch them (failures, throttles).
//
// Lock order: mu, one stripe, rmu or omu, bmu, vmu, emu; the live
// table's, the write buffer's (commit.go) and the store's locks are
// innermost, and a cookie shard's lock is taken alone. A goroutine
// holds at most one stripe: held records are written by release, which
// is called with no stripe held.

// idStripes is how many locks the records are spread over.
const idStripes = 256

type stripe struct {
	sync.Mutex
	_ [56]byte // a stripe to a cache line
}

// idLock is the stripe of record id.
func (cp *Checkpoint) idLock(id uint64) *sync.Mutex {
	return &cp.ids[(id*0x9E3779B97F4A7C15)>>56].Mutex
}
