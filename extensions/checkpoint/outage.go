package checkpoint

// An outage does not kill URLs (docs/checkpoints.md).

import (
	"fmt"
	"maps"
	"slices"
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

// rememberDead notes that record id, of domain, died of failures.
func (cp *Checkpoint) rememberDead(domain string, id uint64) {
	cp.omu.Lock()
	defer cp.omu.Unlock()
	od := cp.outage[domain]
	if od == nil {
		od = &outageDead{ids: map[uint64]uint64{}}
		cp.outage[domain] = od
		cp.outageN.Store(int32(len(cp.outage)))
	}
	if _, ok := od.ids[id]; !ok && len(od.ids) >= outageMemory {
		od.forgotten++
		return
	}
	od.ids[id] = cp.outageSeq.Add(1)
}

// succeeded forgets a domain's URLs that died before e's attempt left:
// they died while the site worked.
func (cp *Checkpoint) succeeded(domain string, e *entry) {
	if cp.outageN.Load() == 0 {
		return // no domain has any: the common case, no lock
	}
	cp.omu.Lock()
	defer cp.omu.Unlock()
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
		cp.outageN.Store(int32(len(cp.outage)))
	}
}

// circuitOutLocked reports whether domain's circuit is not closed, and its RetryAt.
func (cp *Checkpoint) circuitOutLocked(domain string) (bool, time.Time) {
	if cp.b != nil {
		if ss := cp.b.Circuits(domain); len(ss) == 1 {
			return ss[0].State != circuit.Closed, ss[0].RetryAt
		}
	}
	if s, ok := cp.saved[domain]; ok && s.open() {
		return true, s.RetryAt
	}
	return false, time.Time{}
}

// reviveLocked parks domain's remembered dead as its circuit opens.
func (cp *Checkpoint) reviveLocked(domain string, retryAt time.Time, onlyDegraded bool) {
	cp.omu.Lock()
	od := cp.outage[domain]
	delete(cp.outage, domain)
	cp.outageN.Store(int32(len(cp.outage)))
	cp.omu.Unlock()
	if od == nil || cp.failed() {
		return
	}
	now := cp.now().UTC()
	if retryAt.IsZero() {
		retryAt = now
	}
	revived := 0
	for id := range od.ids {
		ok, err := cp.reviveOne(id, retryAt, now, onlyDegraded)
		if err != nil {
			return
		}
		if ok {
			revived++
		}
	}
	_ = cp.flush(true)
	if revived > 0 || od.forgotten > 0 {
		cp.opt.Logger.Info().Str("event", "checkpoint_outage_revived").Str("domain", domain).
			Int("revived", revived).Int("forgotten", od.forgotten).Time("retry_at", retryAt).
			Msg("checkpoint: URLs that spent their attempts as the domain's circuit tripped are parked, not dead: the outage explains their failures")
	}
}

// reviveOne parks record id if it is still dead of failures, under its stripe.
func (cp *Checkpoint) reviveOne(id uint64, retryAt, now time.Time, onlyDegraded bool) (bool, error) {
	l := cp.idLock(id)
	l.Lock()
	defer l.Unlock()
	rec, found, err := cp.recordOf(id, false)
	if err != nil {
		return false, cp.fail(err)
	}
	if !found || rec.State != storage.Dead {
		return false, nil // or sent again since (a retry), and still under way or done
	}
	n, lastErr := spares(rec.LastError)
	cause, gone := deathCause(rec.LastError)
	if gone || n >= outageSpares {
		return false, nil
	}
	if onlyDegraded && !strings.HasPrefix(cause, circuit.Degraded.String()) {
		return false, nil // an invalid page (a consent shell) or a block: not an outage's
	}
	cp.dropHeld(id) // if held: the parked state supersedes it
	rec.State, rec.NotBefore, rec.Updated = storage.Parked, retryAt.UTC(), now
	rec.LastError = withSpares(lastErr, n+1)
	rec.Attempts = min(rec.Attempts, cp.opt.MaxAttempts-1)
	if err := cp.putLocked(rec); err != nil {
		return false, err
	}
	// A retry on its way writes from this record next.
	cp.live.each(func(e *entry) {
		if e.id == id && !e.closed { // e.id: read without e's stripe
			e.rec = rec
		}
	})
	return true, nil
}

// reviveAtEndLocked parks, at the run's end, the remembered dead of
// every domain: each died with no later success of its domain, so the run
// ended inside what looks like the site's outage (a retry loop can spend a
// URL's attempts before the circuit could trip, or the site never answered
// well). Each URL is spared at most outageSpares times, as when a circuit
// opens; only failures of the degraded class (5xx, timeouts, cut bodies)
// are an outage's here: a page that kept failing validation or a block
// stays dead, a matter for a person. A page broken on a working site is
// forgotten by the next success and stays dead.
func (cp *Checkpoint) reviveAtEndLocked() {
	if cp.outageN.Load() == 0 {
		return
	}
	cp.omu.Lock()
	silent := slices.Collect(maps.Keys(cp.outage))
	cp.omu.Unlock()
	for _, domain := range silent {
		cp.reviveLocked(domain, time.Time{}, true)
	}
}
