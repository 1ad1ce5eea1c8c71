package checkpoint

// This file keeps an outage from killing URLs. A URL is dead of failures
// when it spends its attempts while its site otherwise works; a site that
// starts failing makes a retry loop (breaker.RetryOnError) spend a few
// URLs' attempts back to back in the moments before its circuit trips,
// and those failures are the outage's. So the checkpoint remembers, per
// domain, the URLs that died of failures in this run since the domain's
// last success, and when the domain's circuit trips it parks them until
// the circuit may be probed again, with one attempt left for the next
// run. A URL whose attempts run out while its domain's circuit is not
// closed (a half-open probe that failed, an attempt that was under way
// when the circuit opened) is parked the same way instead of dying.
//
// An outage spares a URL at most outageSpares times: its record's
// LastError counts them ("… (spared by an outage 2×)"), and a URL that
// spends its last attempt on a failure once more dies. A site that never
// comes back then ends in URLs dead of failures (an error: a person looks)
// instead of in reschedules for ever.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/storage"
)

// outageMemory bounds how many URLs dead of failures the checkpoint
// remembers per domain between two of its successes. A URL that died past
// the bound is not remembered: if the circuit trips it stays dead (the run
// ends an error, and RetryDead re-drives it), and the revival's log event
// counts it as forgotten. A domain reaches the bound only when thousands
// of its URLs spend every attempt without one success in between and
// without its circuit tripping.
const outageMemory = 4096

// outageDead is what the checkpoint remembers of one domain's URLs that
// died of failures since its last success.
type outageDead struct {
	ids       map[uint64]uint64 // record ID → when it died, in outageSeq
	forgotten int               // died past outageMemory
}

// outageSpares is how many outages may spare one URL.
const outageSpares = 3

// spares returns how many outages spared the record whose LastError is
// lastError, and the error without that count.
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

// rememberDeadLocked notes that record id, of domain, just died of
// failures.
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

// succeededLocked forgets the dead URLs of a domain that answered well an
// attempt that left after they died: they died while the site worked. A
// success that left before a URL died says nothing of the site after
// it (a page in flight when the site started failing, answered well and
// reported after a retry loop spent another URL's attempts), and keeps
// it remembered.
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

// circuitOutLocked reports whether domain's circuit is not closed (open,
// or half-open), and until when it stays open. It asks the attached
// breaker; without one, the states onTransition saved.
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

// reviveLocked runs when domain's circuit opens (a trip, or a failed
// probe): every URL of the domain remembered dead of failures is parked
// until retryAt with MaxAttempts−1 attempts, in one Put. A dead record
// still held back for the links of its page (barrier.go) is taken from the
// hold: a parked record is not final and needs no wait.
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
		} else if !found {
			continue
		}
		if rec.State != storage.Dead {
			continue // sent again since (a retry), and still under way or done
		}
		n, lastErr := spares(rec.LastError)
		if _, gone := deathCause(rec.LastError); gone || n >= outageSpares {
			continue
		}
		cp.unholdLocked(id) // if held: the parked state supersedes it
		rec.State, rec.NotBefore, rec.Updated = storage.Parked, retryAt.UTC(), now
		rec.LastError = withSpares(lastErr, n+1)
		rec.Attempts = min(rec.Attempts, cp.opt.maxAttempts-1)
		recs = append(recs, rec)
		revived[id] = rec
	}
	if len(recs) > 0 {
		if cp.putLocked(recs...) != nil {
			return
		}
		// A request for one of them on its way (a retry in OnRequest)
		// writes its entry's record next: it must start from this one.
		for _, e := range cp.entries {
			if r, ok := revived[e.rec.ID]; ok && !e.closed {
				e.rec = r
			}
		}
	}
	if len(recs) > 0 || od.forgotten > 0 {
		cp.log.Info().Str("event", "checkpoint_outage_revived").Str("domain", domain).
			Int("revived", len(recs)).Int("forgotten", od.forgotten).Time("retry_at", retryAt).
			Msg("checkpoint: URLs that spent their attempts as the domain's circuit tripped are parked, not dead: the outage explains their failures")
	}
}
