package checkpoint

// A final record is held back while a link announced before it is not
// recorded: "Links before their page" in docs/checkpoints.md.

import (
	"slices"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
)

type announce struct {
	seq uint64
	at  time.Time
}

// announcements are in the order made; an entry whose ID was resolved or
// announced again is stale, dropped at the front or by compact.
type announcements struct {
	q         []annRef
	head      int
	unordered bool // the clock went back: the front may not be the oldest
	last      time.Time
}

type annRef struct {
	id  uint64
	seq uint64
}

type heldRecord struct {
	rec       storage.Record
	watermark uint64 // announcements made before it
}

// heldRecords are the final records held back, in order, counted by ID.
type heldRecords struct {
	q   []heldRecord
	ids map[uint64]int
}

func (h *heldRecords) push(r heldRecord) {
	h.q = append(h.q, r)
	h.ids[r.rec.ID]++
}

// popBefore takes the front records whose watermark is below oldest,
// appended to recs.
func (h *heldRecords) popBefore(oldest uint64, recs []storage.Record) []storage.Record {
	n := 0
	for n < len(h.q) && h.q[n].watermark < oldest {
		n++
	}
	for i := range n {
		recs = append(recs, h.q[i].rec)
		h.forget(h.q[i].rec.ID)
	}
	clear(h.q[:n]) // let go of what was popped
	if n == len(h.q) {
		h.q = h.q[:0] // reuse the array
	} else {
		h.q = h.q[n:]
	}
	return recs
}

// latest returns the newest held record of id (newer than the store's).
func (h *heldRecords) latest(id uint64) (storage.Record, bool) {
	if h.ids[id] == 0 {
		return storage.Record{}, false
	}
	for i := len(h.q) - 1; i >= 0; i-- {
		if h.q[i].rec.ID == id {
			return h.q[i].rec, true
		}
	}
	return storage.Record{}, false
}

// recordOf is id's record as it stands: held back or being released, else
// the store's (id's stripe held). With fresh (the store had no record of id
// when IsVisited asked, and only this request writes it) it does not ask
// the store.
func (cp *Checkpoint) recordOf(id uint64, fresh bool) (storage.Record, bool, error) {
	if cp.heldN.Load() > 0 {
		cp.bmu.Lock()
		rec, ok := cp.held.latest(id)
		if r, releasing := cp.releasing[id]; !ok && releasing && !r.superseded {
			rec, ok = r.rec, true
		}
		cp.bmu.Unlock()
		if ok {
			return rec, true, nil
		}
	}
	if fresh {
		r, ok := cp.pend.get(id)
		return r, ok, nil
	}
	return cp.lookup(id)
}

// dropHeld lets go of id's held record, if any: a newer state supersedes
// it (id's stripe held).
func (cp *Checkpoint) dropHeld(id uint64) {
	if cp.heldN.Load() == 0 {
		return
	}
	cp.bmu.Lock()
	cp.held.drop(id)
	if r, ok := cp.releasing[id]; ok {
		r.superseded = true
		cp.releasing[id] = r
	}
	cp.heldN.Store(int64(len(cp.held.q) + len(cp.releasing)))
	cp.bmu.Unlock()
}

func (h *heldRecords) drop(id uint64) {
	if h.ids[id] == 0 {
		return
	}
	for i := range h.q {
		if h.q[i].rec.ID == id {
			h.q = slices.Delete(h.q, i, i+1)
			h.forget(id)
			return
		}
	}
}

func (h *heldRecords) forget(id uint64) {
	if h.ids[id] <= 1 {
		delete(h.ids, id)
	} else {
		h.ids[id]--
	}
}

// announceVisitLocked records that Colly marked id visited (cp.vmu held).
func (cp *Checkpoint) announceVisitLocked(id uint64) {
	cp.annSeq++
	now := cp.now()
	cp.announced[id] = announce{seq: cp.annSeq, at: now}
	a := &cp.anns
	if now.Before(a.last) {
		a.unordered = true
	}
	a.last = now
	if live := len(cp.announced); len(a.q)-a.head > 2*live+1024 {
		a.compact(cp.announced)
	}
	a.q = append(a.q, annRef{id: id, seq: cp.annSeq})
}

func (r annRef) live(announced map[uint64]announce) bool {
	a, ok := announced[r.id]
	return ok && a.seq == r.seq
}

func (a *announcements) compact(announced map[uint64]announce) {
	n := 0
	for _, r := range a.q[a.head:] {
		if r.live(announced) {
			a.q[n] = r
			n++
		}
	}
	clear(a.q[n:])
	a.q, a.head = a.q[:n], 0
}

// resolve records that id was requested, or was a redirect hop; release
// then writes what it held back.
func (cp *Checkpoint) resolve(id uint64, hop bool) {
	cp.vmu.Lock()
	defer cp.vmu.Unlock()
	if _, ok := cp.announced[id]; !ok {
		return
	}
	delete(cp.announced, id)
	if hop {
		cp.hops[id] = struct{}{}
	}
}

// finalLocked writes a final record, or holds it back (its stripe held).
func (cp *Checkpoint) finalLocked(rec storage.Record) error {
	cp.bmu.Lock()
	cp.vmu.Lock()
	open, watermark := len(cp.announced), cp.annSeq
	cp.vmu.Unlock()
	if open == 0 && len(cp.held.q) == 0 {
		cp.bmu.Unlock()
		return cp.putLocked(rec)
	}
	cp.held.push(heldRecord{rec: rec, watermark: watermark})
	cp.heldN.Add(1)
	cp.bmu.Unlock()
	cp.heldDone.Add(1)
	return nil
}

// releasing is a held record taken off the queue, not yet written.
type releasing struct {
	rec        storage.Record
	seq        uint64 // which record release took: a later release of its ID takes its place
	superseded bool   // a newer state of its record was written meanwhile
}

// release writes the held records older than every open announcement, or
// with all (the crawl is over) every one. The caller holds no stripe: each
// record is written under its own.
func (cp *Checkpoint) release(all bool) {
	if cp.heldN.Load() == 0 {
		return
	}
	cp.bmu.Lock()
	if len(cp.held.q) == 0 {
		cp.bmu.Unlock()
		return
	}
	oldest := ^uint64(0)
	if !all {
		oldest = cp.oldestAnnouncementLocked()
	}
	var few [4]storage.Record // mostly one or two: no allocation
	recs := cp.held.popBefore(oldest, few[:0])
	first := cp.releases + 1 // recs[i] is release first+i
	for i := range recs {
		id := recs[i].ID
		// An older one of id, still on its way, is superseded by this one.
		cp.releasing[id] = releasing{rec: recs[i], seq: first + uint64(i)}
	}
	cp.releases += uint64(len(recs))
	cp.heldN.Store(int64(len(cp.held.q) + len(cp.releasing)))
	cp.bmu.Unlock()
	for i := range recs {
		cp.writeReleased(recs[i].ID, first+uint64(i))
	}
}

// writeReleased writes release seq of record id under its stripe unless
// a newer state was written meanwhile, or a later release took its place.
func (cp *Checkpoint) writeReleased(id, seq uint64) {
	l := cp.idLock(id)
	l.Lock()
	defer l.Unlock()
	cp.bmu.Lock()
	r, ok := cp.releasing[id]
	mine := ok && r.seq == seq
	if mine {
		delete(cp.releasing, id)
	}
	cp.heldN.Store(int64(len(cp.held.q) + len(cp.releasing)))
	cp.bmu.Unlock()
	if mine && !r.superseded {
		_ = cp.putLocked(r.rec)
	}
}

// oldestAnnouncementLocked returns the oldest open announcement, expiring
// old ones (bmu held).
func (cp *Checkpoint) oldestAnnouncementLocked() uint64 {
	cp.vmu.Lock()
	defer cp.vmu.Unlock()
	oldest := ^uint64(0)
	now := cp.now()
	a := &cp.anns
	if a.unordered {
		for id, an := range cp.announced {
			if now.Sub(an.at) >= cp.opt.Grace {
				cp.expireVisitLocked(id)
				continue
			}
			oldest = min(oldest, an.seq)
		}
		return oldest
	}
	// In time order: those past the grace period are at the front.
	for a.head < len(a.q) {
		r := a.q[a.head]
		if r.live(cp.announced) {
			if now.Sub(cp.announced[r.id].at) < cp.opt.Grace {
				return r.seq
			}
			cp.expireVisitLocked(r.id)
		}
		a.q[a.head] = annRef{}
		a.head++
	}
	a.q, a.head = a.q[:0], 0
	return oldest
}

// expireVisitLocked takes announcement id for a redirect hop (vmu held).
func (cp *Checkpoint) expireVisitLocked(id uint64) {
	delete(cp.announced, id)
	cp.hops[id] = struct{}{}
	cp.graceFreed.Add(1)
}
