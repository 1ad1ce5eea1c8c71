package domains

import (
	"cmp"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// fleetTripped notes d's trip with the fleet guard and, when the guard
// finds the client, not d, to be the problem, pauses every active domain
// together.
func (b *Set) fleetTripped(d *Domain, at time.Time, clientSide bool) {
	cfg := b.Fleet
	if !clientSide || cfg.Off {
		return
	}
	active := b.activeDomains(at, cfg.Active)
	since := at
	if ns := d.failSince.Load(); ns != 0 && ns < at.UnixNano() {
		since = time.Unix(0, ns)
	}
	recent := b.fleet.Tripped(d.Name, at, since, len(active), func(t time.Time) bool { return anySucceeding(active, t) })
	if recent == nil {
		return
	}
	pause := cmp.Or(cfg.Pause, b.Profile.Cooldown)
	b.Log.Error().Str("event", "client_side_suspect").Strs("tripped", recent).Int("active", len(active)).
		Dur("within", cfg.Within).Dur("pause", pause).
		Msgf("breaker: %d of %d active domains tripped within %v: suspect the client side (proxy, network, resolver); pausing every domain", len(recent), len(active), cfg.Within)
	for _, other := range active {
		if !other.pin() {
			continue // being compacted: idle, nothing to pause
		}
		until := at.Add(pause)
		t, err := other.Circuit.HoldOpen(b.Clock, until, circuit.ReasonFleetPause)
		switch m := other.open.Load(); {
		case err != nil:
		case t.From != t.To:
			b.transitioned(other, t)
		case m == nil || until.UnixNano() > m.until:
			// Already open: make sure the cached refusal lasts the pause.
			b.setOpen(other, &circuit.OpenError{Key: other.Name, State: circuit.Open, RetryAt: until})
		}
		other.Unpin()
	}
}

// fleetAlarm has the fleet guard look at the blocked and throttled share
// since its last look (at most once a second, and only when such an
// answer arrives, so the hot path never pays for it), and logs what fired.
func (b *Set) fleetAlarm(now time.Time) {
	for _, a := range b.fleet.Look(now, b.fleetTotals) {
		what := "403s: a client, proxy or fingerprint problem"
		if a.Class == circuit.Throttled {
			what = "429s: the fleet is going too fast; slow down or spread out"
		}
		b.Log.Warn().Str("event", a.Class.String()+"_fleet").Float64("share", round3(a.Share)).Int64("attempts", a.Attempts).
			Msgf("breaker: %.0f%% of recent attempts across all domains were %s, not an outage", 100*a.Share, what)
	}
}

// fleetTotals sums the attempts per class of every domain, live and
// compacted.
func (b *Set) fleetTotals() fleetTotals {
	tot := fleetTotals(b.dormant.Totals().Counts)
	for d := range b.all {
		for c, n := range d.counts() {
			tot[c] += n
		}
	}
	return tot
}

// anySucceeding reports whether a request to a domain of ds that left
// since cut succeeded: then the client can reach the network, and the
// failing domains are failing.
func anySucceeding(ds []*Domain, cut time.Time) bool {
	for _, d := range ds {
		if d.lastOK.Load() >= cut.UnixNano() {
			return true
		}
	}
	return false
}

// activeDomains returns the domains a request left for within span of now
// (through the Colly gate), and those used only through Allow and Record,
// which keep no time, if they have any outcome at all.
func (b *Set) activeDomains(now time.Time, span time.Duration) []*Domain {
	var out []*Domain
	cut := now.Add(-span).UnixNano()
	for d := range b.all {
		if seen := d.lastSeen.Load(); seen >= cut || (seen == 0 && d.counts() != [numClasses]int64{}) {
			out = append(out, d)
		}
	}
	return out
}

// counts reads d's attempts by class.
func (d *Domain) counts() (n [numClasses]int64) {
	for c := range n {
		n[c] = int64(d.Counts[c].Load())
	}
	return n
}
