package checkpoint

import "sync"

// Locking. Every request's goroutine calls the checkpoint several times a
// page, so its path takes no process-wide lock (one queued a broad crawl
// behind itself, issue 26): its entry is in a sharded map (live.go); a
// record's read, state change and write are one step under its stripe, one
// of idStripes locks by ID, so that two requests of one URL write in order;
// writes go to the group commit's sharded buffer (commit.go). The held
// records (bmu), announcements (vmu), re-send and redirect URLs (rmu),
// outage memory (omu) and first store error (emu) have short locks; mu is
// for the frontier, the run, the saved circuits and the outcomes that touch
// them (failures, throttles).
//
// Lock order: mu, one stripe, rmu or omu, bmu, vmu, emu; the sharded maps'
// and the store's locks are innermost, and a cookie shard's lock is taken
// alone. A goroutine holds at most one stripe: release, which writes the
// held records, is called with none held.

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
