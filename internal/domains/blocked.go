package domains

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/outcome"
)

// A domain answering 401/403 to everything refuses the client; it is not
// failing, so the circuit never counts it. After Config.BlockedAfter such
// answers in a row the domain is held for the rest of the run, refused as
// Blocked, and the run ends in error.

// holdBlocked holds d after n blocked answers in a row, once.
func (b *Set) holdBlocked(d *Domain, n int64) {
	// RetryAt a cooldown away, as after a trip: a shared queue parks the
	// domain's jobs that long instead of claiming them again at once, and
	// the checkpoint keeps them for a later run.
	e := &circuit.OpenError{Key: d.Name, State: circuit.Closed, RetryAt: b.Clock.Now().Add(d.Profile.Cooldown), Blocked: true}
	if !d.held.CompareAndSwap(nil, e) {
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
	if d.held.CompareAndSwap(h, &n) {
		return &n
	}
	return d.held.Load()
}

// blockedFinding is the ending's error for the domains held blocked, nil
// when none is.
func (b *Set) blockedFinding() *outcome.Finding {
	var held []string
	for d := range b.all {
		if d.held.Load() != nil {
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
