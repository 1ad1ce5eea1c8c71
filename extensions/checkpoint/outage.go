package checkpoint

// An outage does not kill URLs (docs/checkpoints.md).

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/storage"
)

// outageMemory bounds the dead URLs remembered per domain (the rest: forgotten).
const outageMemory = 4096

// outageDead is one domain's URLs dead of failures since its last success.
type outageDead struct {
	ids       map[uint64]uint64 // record ID → when it died, in outageSeq
	forgotten int               // died past outageMemory
}

// outageSpares is how many outages may spare one URL.
const outageSpares = 3

// spares returns how many outages spared a record, and LastError without it.
func spares(lastError string) (int, string) {
	head, tail, ok := strings.Cut(lastError, " (spared by an outage ")
	if !ok || !strings.HasSuffix(tail, "×)") {
		return 0, lastError
	}
	n, err := strconv.Atoi(strings.TrimSuffix(tail, "×)"))
	if err != nil || n < 1 {
		return 0, lastError
	}
	return n, head
}

// withSpares is reason with n outages' spares counted (none: reason).
func withSpares(reason string, n int) string {
	if n <= 0 {
		return reason
	}
	return fmt.Sprintf("%s (spared by an outage %d×)", reason, n)
}

// rememberDeadLocked notes that record id, of domain, died of failures.
func (cp *Checkpoint) rememberDeadLocked(domain string, id uint64) {
	od := cp.outage[domain]
	if od == nil {
		od = &outageDead{ids: map[uint64]uint64{}}
		cp.outage[domain] = od
	}
	if _, ok := od.ids[id]; !ok && len(od.ids) >= outageMemory {
		od.forgotten++
		return
	}
	cp.outageSeq++
	od.ids[id] = cp.outageSeq
}

// stampLeftLocked notes when e's attempt left, in outageSeq.
func (cp *Checkpoint) stampLeftLocked(e *entry) {
	cp.outageSeq++
	e.leftSeq = cp.outageSeq
}

// succeededLocked forgets a domain's URLs that died before e's attempt
// left: they died while the site worked.
func (cp *Checkpoint) succeededLocked(domain string, e *entry) {
	od := cp.outage[domain]
	if od == nil {
		return
	}
	for id, died := range od.ids {
		if died < e.leftSeq {
			delete(od.ids, id)
		}
	}
	if len(od.ids) == 0 {
		delete(cp.outage, domain)
	}
}

// circuitOutLocked reports whether domain's circuit is not closed, and its RetryAt.
func (cp *Checkpoint) circuitOutLocked(domain string) (bool, time.Time) {
	if cp.b != nil {
		if ss := cp.b.Snapshots(domain); len(ss) == 1 {
			return ss[0].State != circuit.Closed, ss[0].RetryAt
		}
	}
	if s, ok := cp.saved[domain]; ok && s.open() {
		return true, s.RetryAt
	}
	return false, time.Time{}
}

// reviveLocked parks domain's remembered dead as its circuit opens.
func (cp *Checkpoint) reviveLocked(domain string, retryAt time.Time) {
	od := cp.outage[domain]
	if od == nil {
		return
	}
	delete(cp.outage, domain)
	if cp.err != nil {
		return
	}
	now := cp.now().UTC()
	if retryAt.IsZero() {
		retryAt = now
	}
	revived := map[uint64]storage.Record{}
	recs := make([]storage.Record, 0, len(od.ids))
	for id := range od.ids {
		rec, found, err := cp.recordLocked(id)
		if err != nil {
			cp.failLocked(err)
			return
		}
		if !found || rec.State != storage.Dead {
			continue // or sent again since (a retry), and still under way or done
		}
		n, lastErr := spares(rec.LastError)
		if _, gone := deathCause(rec.LastError); gone || n >= outageSpares {
			continue
		}
		cp.held.drop(id) // if held: the parked state supersedes it
		rec.State, rec.NotBefore, rec.Updated = storage.Parked, retryAt.UTC(), now
		rec.LastError = withSpares(lastErr, n+1)
		rec.Attempts = min(rec.Attempts, cp.opt.MaxAttempts-1)
		recs = append(recs, rec)
		revived[id] = rec
	}
	if len(recs) > 0 {
		if cp.putLocked(recs...) != nil {
			return
		}
		// A retry on its way writes from this record next.
		cp.live.each(func(e *entry) {
			if r, ok := revived[e.rec.ID]; ok && !e.closed {
				e.rec = r
			}
		})
	}
	if len(recs) > 0 || od.forgotten > 0 {
		cp.opt.Logger.Info().Str("event", "checkpoint_outage_revived").Str("domain", domain).
			Int("revived", len(recs)).Int("forgotten", od.forgotten).Time("retry_at", retryAt).
			Msg("checkpoint: URLs that spent their attempts as the domain's circuit tripped are parked, not dead: the outage explains their failures")
	}
}
