package domains

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/outcome"
)

// A domain answering 401/403 to everything refuses the client; it is not
// failing, so the circuit never counts it. After Config.BlockedAfter such
// answers in a row the domain is held for the rest of the run, refused as
// Blocked, and the run ends in error.

// rareState is what a domain keeps once it answered 429 or 401/403, lent
// its shared LimitRule slot, or had a request cut by the crawl's end: those
// answers in a row, where the blocked run began, the blocked hold, the
// lent slot's cap and the cut requests. It is made when first needed
// (rareMade) and kept: most domains of a broad crawl never need it, and
// hold a nil pointer, not 32 bytes (a Domain in 160).
type rareState struct {
	held        atomic.Pointer[circuit.OpenError] // held for answering 401/403 to every request; nil = not held
	blockedFrom atomic.Uint64                     // ticket order of the blocked run's first answer (0: none or unknown)
	throttled   atomic.Int32                      // 429s in a row
	blocked     atomic.Int32                      // 401/403s in a row
	// shareCap caps its room once a request of its lent its shared
	// LimitRule slot (Lend): the rule's parallelism, 0 before.
	shareCap atomic.Int32
	// unanswered counts requests that left and were then cut by the
	// crawl's own end: the site may have received them.
	unanswered atomic.Int32
}

// unanswered is how many of d's requests were cut by the crawl's end.
func (d *Domain) unanswered() int32 {
	if r := d.rare.Load(); r != nil {
		return r.unanswered.Load()
	}
	return 0
}

// rareMade returns d's rareState, made now if d had none.
func (d *Domain) rareMade() *rareState {
	if r := d.rare.Load(); r != nil {
		return r
	}
	if r := (&rareState{}); d.rare.CompareAndSwap(nil, r) {
		return r
	}
	return d.rare.Load()
}

// heldErr is the refusal d is held blocked with; nil = not held.
func (d *Domain) heldErr() *circuit.OpenError {
	if r := d.rare.Load(); r != nil {
		return r.held.Load()
	}
	return nil
}

// throttledInARow is how many 429s d answered in a row.
func (d *Domain) throttledInARow() int32 {
	if r := d.rare.Load(); r != nil {
		return r.throttled.Load()
	}
	return 0
}

// blockedInARow is how many 401/403s d answered in a row.
func (d *Domain) blockedInARow() int32 {
	if r := d.rare.Load(); r != nil {
		return r.blocked.Load()
	}
	return 0
}

// holdBlocked holds d after n blocked answers in a row, once.
func (b *Set) holdBlocked(d *Domain, n int64) {
	// RetryAt a cooldown away, as after a trip: a shared queue parks the
	// domain's jobs that long instead of claiming them again at once, and
	// the checkpoint keeps them for a later run.
	e := &circuit.OpenError{Key: d.Name, State: circuit.Closed, RetryAt: b.Clock.Now().Add(d.Profile.Cooldown), Blocked: true}
	if !d.rareMade().held.CompareAndSwap(nil, e) {
		return
	}
	b.Log.Error().Str("event", "blocked_held").Str("domain", d.Name).Int64("in_a_row", n).
		Msg("breaker: domain answered 401/403 to every request lately; held for the rest of the run: fix the client (proxy, headers, fingerprint), not the site")
}

// heldRefusal is h, the refusal of d held blocked, with its RetryAt moved
// a cooldown ahead once it has passed: the hold lasts the run, and a queue
// that parks the URL until RetryAt must not claim it again at once. The
// breaker's rough clock is enough: a second early is still ahead.
func (b *Set) heldRefusal(d *Domain, h *circuit.OpenError) *circuit.OpenError {
	now := b.roughNow()
	if h.RetryAt.UnixNano() > now {
		return h
	}
	n := *h
	n.RetryAt = time.Unix(0, now).Add(d.Profile.Cooldown)
	r := d.rareMade() // made already: h is its
	if r.held.CompareAndSwap(h, &n) {
		return &n
	}
	return r.held.Load()
}

// blockedFinding is the ending's error for the domains held blocked, nil
// when none is.
func (b *Set) blockedFinding() *outcome.Finding {
	var held []string
	for d := range b.all {
		if d.heldErr() != nil {
			held = append(held, d.Name)
		}
	}
	if len(held) == 0 {
		return nil
	}
	sort.Strings(held)
	return &outcome.Finding{State: outcome.Error, Kind: "blocked", Domains: held,
		Reason: fmt.Sprintf("blocked: fix the client: %d answers of 401/403 in a row from %s, held for the rest of the run (their URLs are kept unfinished)",
			b.BlockedAfter, strings.Join(held, ", "))}
}
