package checkpoint

// Links found on a page must be in the checkpoint before the page is
// recorded done: a done page is never fetched again, so a link found on it
// and not yet recorded when the process dies would be lost for good.
//
// Colly makes that hard. A link is marked visited (Storage.Visited, which
// is given only the request's ID) in the goroutine of the page that found
// it, and requested (OnRequest, where the checkpoint first sees its URL
// and can record it) in a goroutine of its own, a moment later. So every
// Visited is an announcement; OnRequest of the same ID resolves it, after
// the link's record is written. A final record (done or dead) is held back
// while any announcement made before it is unresolved, and written once
// they all are. The store commits writes in the order they were made, so
// on disk a page is never done without the links found on it.
//
// Colly also marks the hops of a redirect chain visited, and never
// requests them. The hop a response ended at is resolved when the
// response arrives; an announcement older than the grace period (a hop in
// the middle of a chain) is taken for one and stops holding records back.

import (
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
)

type announce struct {
	seq uint64
	at  time.Time
}

type heldRecord struct {
	rec       storage.Record
	watermark uint64 // announcements made before it
}

// announceLocked records that Colly marked id visited.
func (cp *Checkpoint) announceLocked(id uint64) {
	cp.annSeq++
	cp.announced[id] = announce{seq: cp.annSeq, at: cp.now()}
}

// resolveLocked records that id's request was seen (and its record
// written), or that id was a redirect hop.
func (cp *Checkpoint) resolveLocked(id uint64, hop bool) {
	if _, ok := cp.announced[id]; !ok {
		return
	}
	delete(cp.announced, id)
	if hop {
		cp.hops[id] = struct{}{}
	}
	cp.releaseLocked()
}

// finalLocked writes a final record, or holds it while links found before
// it are unrecorded.
func (cp *Checkpoint) finalLocked(rec storage.Record) error {
	if len(cp.announced) == 0 && len(cp.held) == 0 {
		return cp.putLocked(rec)
	}
	cp.held = append(cp.held, heldRecord{rec: rec, watermark: cp.annSeq})
	cp.stats.HeldDone++
	cp.releaseLocked()
	return nil
}

// releaseLocked writes the held records no unresolved announcement is
// older than, in the order they were held.
func (cp *Checkpoint) releaseLocked() {
	if len(cp.held) == 0 {
		return
	}
	oldest := ^uint64(0)
	now := cp.now()
	for id, a := range cp.announced {
		if now.Sub(a.at) >= cp.opt.grace {
			delete(cp.announced, id)
			cp.hops[id] = struct{}{}
			cp.stats.GraceFreed++
			continue
		}
		oldest = min(oldest, a.seq)
	}
	n := 0
	for n < len(cp.held) && cp.held[n].watermark < oldest {
		n++
	}
	if n == 0 {
		return
	}
	recs := make([]storage.Record, n)
	for i := range n {
		recs[i] = cp.held[i].rec
	}
	cp.held = append(cp.held[:0], cp.held[n:]...)
	_ = cp.putLocked(recs...)
}

// releaseAllLocked writes every held record: the crawl is over, and no
// link that was announced will be requested any more.
func (cp *Checkpoint) releaseAllLocked() {
	if len(cp.held) == 0 {
		return
	}
	recs := make([]storage.Record, len(cp.held))
	for i, h := range cp.held {
		recs[i] = h.rec
	}
	cp.held = cp.held[:0]
	_ = cp.putLocked(recs...)
}

// unholdLocked drops a held record of id: a newer state supersedes it.
func (cp *Checkpoint) unholdLocked(id uint64) {
	for i, h := range cp.held {
		if h.rec.ID == id {
			cp.held = append(cp.held[:i], cp.held[i+1:]...)
			return
		}
	}
}
