package breaker

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/outcome"
)

// FleetGuard judges the whole fleet of domains rather than each one.
//
// When at least MinDomains domains, and at least Share of the active ones,
// trip within Within for the same kind of cause, a network one (mostly no
// HTTP answer at all: connections refused or reset, timeouts, DNS), while
// no active domain succeeded since the first of the failures that tripped
// them began (a request that left after it and succeeded shows the client
// working), it is almost never every target
// failing at once: it is our proxy, network or resolver. The breaker then
// emits one client_side_suspect event, pauses every active domain together
// for Pause instead of blaming each target, and the run's outcome is an
// error (exit 1: a human must look), not a trip. Sites that answer 5xx or
// bad pages are answering: they are bad sites, not a broken client, however
// many of them there are. A domain is active if a request to it left
// within Active.
//
// Blocked (401/403) and throttled (429) answers get their own fleet-wide
// alarms: when at least AlarmShare of the AlarmMin or more attempts across
// every domain since the last look were blocked (or throttled), one
// blocked_fleet (throttled_fleet) warning says "fix your client", not "the
// targets are down".
//
// Zero fields take the defaults: Share 0.5, Within 1 minute, MinDomains 3,
// Pause the default profile's Cooldown, Active 5 minutes, AlarmShare 0.5,
// AlarmMin 20. Off disables the guard.
type FleetGuard struct {
	Share      float64
	Within     time.Duration
	MinDomains int
	Pause      time.Duration
	Active     time.Duration
	AlarmShare float64
	AlarmMin   int
	Off        bool
}

func defaultFleetGuard() fleetGuard {
	return fleetGuard{cfg: FleetGuard{Share: 0.5, Within: time.Minute, MinDomains: 3, Active: 5 * time.Minute, AlarmShare: 0.5, AlarmMin: 20}}
}

// setFleetGuard configures the fleet-wide judgement (Config.Fleet), its
// zero fields taking the defaults.
func (b *Breaker) setFleetGuard(g FleetGuard) error {
	d := defaultFleetGuard().cfg
	if g.Share == 0 {
		g.Share = d.Share
	}
	if g.Within == 0 {
		g.Within = d.Within
	}
	if g.MinDomains == 0 {
		g.MinDomains = d.MinDomains
	}
	if g.Active == 0 {
		g.Active = d.Active
	}
	if g.AlarmShare == 0 {
		g.AlarmShare = d.AlarmShare
	}
	if g.AlarmMin == 0 {
		g.AlarmMin = d.AlarmMin
	}
	switch {
	case g.Share < 0 || g.Share > 1 || g.AlarmShare < 0 || g.AlarmShare > 1:
		return fmt.Errorf("breaker: FleetGuard shares must be in (0, 1]: Share %v, AlarmShare %v", g.Share, g.AlarmShare)
	case g.Within < 0 || g.Pause < 0 || g.Active < 0 || g.MinDomains < 1 || g.AlarmMin < 1:
		return fmt.Errorf("breaker: FleetGuard %+v: durations must be positive, MinDomains and AlarmMin at least 1", g)
	}
	b.fleet.cfg = g
	return nil
}

type fleetGuard struct {
	cfg FleetGuard

	mu        sync.Mutex
	trips     map[string]time.Time // domain → its latest trip
	since     map[string]time.Time // domain → when the failures that tripped it began
	suspectAt time.Time            // the latest client_side_suspect
	suspects  []string             // domains tripped in it
	found     *outcome.Finding

	lastLook time.Time
	seen     [numClasses]int64 // fleet totals at the last look
	alarmOn  [numClasses]bool
}

// tripped notes d's trip and judges whether the fleet, not d, is the
// problem.
func (g *fleetGuard) tripped(b *Breaker, d *domain, at time.Time, clientSide bool) {
	if g.cfg.Off || !clientSide {
		return
	}
	active := b.activeDomains(at, g.cfg.Active)
	since := at
	if ns := d.failSince.Load(); ns != 0 && ns < at.UnixNano() {
		since = time.Unix(0, ns)
	}
	g.mu.Lock()
	if g.trips == nil {
		g.trips, g.since = map[string]time.Time{}, map[string]time.Time{}
	}
	g.trips[d.name], g.since[d.name] = at, since
	var recent []string
	first := at // the earliest start of the failures that tripped them
	for name, t := range g.trips {
		if at.Sub(t) <= g.cfg.Within {
			recent = append(recent, name)
			if s := g.since[name]; s.Before(first) {
				first = s
			}
		} else {
			delete(g.trips, name)
			delete(g.since, name)
		}
	}
	fire := len(recent) >= g.cfg.MinDomains && float64(len(recent)) >= g.cfg.Share*float64(max(len(active), 1)) &&
		(g.suspectAt.IsZero() || at.Sub(g.suspectAt) > g.cfg.Within) &&
		!anySucceeding(active, first)
	if fire {
		sort.Strings(recent)
		g.suspectAt, g.suspects = at, recent
		g.found = &outcome.Finding{State: outcome.Error, Kind: "client_side_suspect", Domains: recent,
			Reason: fmt.Sprintf("client_side_suspect: %d of %d active domains tripped within %v (%s): suspect our proxy, network or resolver, not the targets",
				len(recent), len(active), g.cfg.Within, strings.Join(recent, ", "))}
	}
	g.mu.Unlock()
	if !fire {
		return
	}
	pause := g.cfg.Pause
	if pause == 0 {
		pause = b.profile.Cooldown
	}
	b.log.Error().Str("event", "client_side_suspect").Strs("tripped", recent).Int("active", len(active)).
		Dur("within", g.cfg.Within).Dur("pause", pause).
		Msgf("breaker: %d of %d active domains tripped within %v: suspect the client side (proxy, network, resolver); pausing every domain", len(recent), len(active), g.cfg.Within)
	for _, other := range active {
		if !other.pin() {
			continue // being compacted: idle, nothing to pause
		}
		t, err := other.circuit.HoldOpen(b.clock, at.Add(pause), ReasonFleetPause)
		if err == nil && t.From != t.To {
			b.transitioned(other, t)
		} else if err == nil {
			// Already open: make sure the cached refusal lasts the pause.
			if until := at.Add(pause); until.UnixNano() > other.openUntil() {
				b.setOpen(other, &CircuitOpenError{Key: other.name, State: Open, RetryAt: until})
			}
		}
		other.unpin()
	}
}

// alarm looks at the fleet's blocked and throttled share since the last
// look (at most once a second, and only when such an answer arrives, so
// the hot path never pays for it).
func (g *fleetGuard) alarm(b *Breaker, now time.Time) {
	if g.cfg.Off {
		return
	}
	g.mu.Lock()
	if now.Sub(g.lastLook) < time.Second {
		g.mu.Unlock()
		return
	}
	g.lastLook = now
	var tot [numClasses]int64
	b.domains.Range(func(_, v any) bool {
		d := v.(*domain)
		for c := range numClasses {
			tot[c] += d.counts[c].Load()
		}
		return true
	})
	dt := b.dormantTotals()
	for c := range numClasses {
		tot[c] += dt.counts[c]
	}
	var delta [numClasses]int64
	var all int64
	for c := range numClasses {
		delta[c] = tot[c] - g.seen[c]
		if Class(c) != Excluded {
			all += delta[c]
		}
	}
	g.seen = tot
	type fired struct {
		c     Class
		share float64
	}
	var out []fired
	if all >= int64(g.cfg.AlarmMin) {
		for _, c := range []Class{Blocked, Throttled} {
			share := float64(delta[c]) / float64(all)
			switch {
			case share >= g.cfg.AlarmShare && !g.alarmOn[c]:
				g.alarmOn[c] = true
				out = append(out, fired{c, share})
			case share < g.cfg.AlarmShare/2:
				g.alarmOn[c] = false
			}
		}
	}
	g.mu.Unlock()
	for _, f := range out {
		what := "403s: a client, proxy or fingerprint problem"
		if f.c == Throttled {
			what = "429s: the fleet is going too fast; slow down or spread out"
		}
		b.log.Warn().Str("event", f.c.String()+"_fleet").Float64("share", round3(f.share)).Int64("attempts", all).
			Msgf("breaker: %.0f%% of recent attempts across all domains were %s, not an outage", 100*f.share, what)
	}
}

// anySucceeding reports whether a request to a domain of ds that left
// since cut succeeded: then the client can reach the network, and the
// failing domains are failing.
func anySucceeding(ds []*domain, cut time.Time) bool {
	for _, d := range ds {
		if d.lastOK.Load() >= cut.UnixNano() {
			return true
		}
	}
	return false
}

// finding is the client_side_suspect finding for the run's outcome, if
// one happened.
func (g *fleetGuard) finding() *outcome.Finding {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.found
}

// activeDomains returns the domains a request left for within span of now
// (through the Colly gate), and those used only through Allow and Record,
// which keep no time, if they have any outcome at all.
func (b *Breaker) activeDomains(now time.Time, span time.Duration) []*domain {
	var out []*domain
	cut := now.Add(-span).UnixNano()
	b.domains.Range(func(_, v any) bool {
		d := v.(*domain)
		seen := d.lastSeen.Load()
		if seen >= cut || (seen == 0 && d.attempted()) {
			out = append(out, d)
		}
		return true
	})
	return out
}

func (d *domain) attempted() bool {
	for c := range numClasses {
		if d.counts[c].Load() > 0 {
			return true
		}
	}
	return false
}
