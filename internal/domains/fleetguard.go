package domains

// The fleet guard judges the whole fleet of domains rather than each one.

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/outcome"
)

// FleetConfig is the fleet guard's settings: breaker.FleetGuard, whose doc and
// docs/pacing.md tell each field. Zero fields take fleetDefaults; a zero Pause
// is the default profile's Cooldown.
type FleetConfig struct {
	Share      float64
	Within     time.Duration
	MinDomains int
	Pause      time.Duration
	Active     time.Duration
	AlarmShare float64
	AlarmMin   int
	Off        bool
}

// fleetDefaults are the settings a zero field takes.
var fleetDefaults = FleetConfig{Share: 0.5, Within: time.Minute, MinDomains: 3, Active: 5 * time.Minute, AlarmShare: 0.5, AlarmMin: 20}

// Normalise fills the defaults of c's zero fields and rejects bad values.
func (c FleetConfig) Normalise() (FleetConfig, error) {
	d := fleetDefaults
	c.Share = cmp.Or(c.Share, d.Share)
	c.Within = cmp.Or(c.Within, d.Within)
	c.MinDomains = cmp.Or(c.MinDomains, d.MinDomains)
	c.Active = cmp.Or(c.Active, d.Active)
	c.AlarmShare = cmp.Or(c.AlarmShare, d.AlarmShare)
	c.AlarmMin = cmp.Or(c.AlarmMin, d.AlarmMin)
	switch {
	case c.Share < 0 || c.Share > 1 || c.AlarmShare < 0 || c.AlarmShare > 1:
		return c, fmt.Errorf("FleetGuard shares must be in (0, 1]: Share %v, AlarmShare %v", c.Share, c.AlarmShare)
	case c.Within < 0 || c.Pause < 0 || c.Active < 0 || c.MinDomains < 1 || c.AlarmMin < 1:
		return c, fmt.Errorf("FleetGuard %+v: durations must be positive, MinDomains and AlarmMin at least 1", c)
	}
	return c, nil
}

// fleetTotals are attempts per outcome class, summed over every domain.
type fleetTotals [numClasses]int64

// fleetGuard is the fleet-wide judgement of one breaker.
type fleetGuard struct {
	cfg FleetConfig

	mu        sync.Mutex
	trips     map[string]fleetTrip // domain → its latest fleetTrip
	suspectAt time.Time            // the latest client_side_suspect
	found     *outcome.Finding

	lastLook time.Time
	seen     fleetTotals // fleet totals at the last look
	alarmOn  [numClasses]bool
}

// fleetTrip is when a domain tripped, and when the failures that tripped it began.
type fleetTrip struct{ at, since time.Time }

// New returns a guard judging by c (normalised).
func newFleetGuard(c FleetConfig) *fleetGuard { return &fleetGuard{cfg: c} }

// Tripped notes a client-side fleetTrip of domain at at, of failures that
// began at since, with active domains active; succeeded reports whether a
// request that left at or after a time succeeded. On client_side_suspect
// it returns the domains tripped within the window, sorted.
func (g *fleetGuard) Tripped(domain string, at, since time.Time, active int, succeeded func(time.Time) bool) []string {
	if g.cfg.Off {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.trips == nil {
		g.trips = map[string]fleetTrip{}
	}
	g.trips[domain] = fleetTrip{at, since}
	var recent []string
	first := at // the earliest start of the failures that tripped them
	for name, t := range g.trips {
		if at.Sub(t.at) <= g.cfg.Within {
			recent = append(recent, name)
			if t.since.Before(first) {
				first = t.since
			}
		} else {
			delete(g.trips, name)
		}
	}
	fire := len(recent) >= g.cfg.MinDomains && float64(len(recent)) >= g.cfg.Share*float64(max(active, 1)) &&
		(g.suspectAt.IsZero() || at.Sub(g.suspectAt) > g.cfg.Within) &&
		!succeeded(first)
	if !fire {
		return nil
	}
	sort.Strings(recent)
	g.suspectAt = at
	g.found = &outcome.Finding{State: outcome.Error, Kind: "client_side_suspect", Domains: recent,
		Reason: fmt.Sprintf("client_side_suspect: %d of %d active domains tripped within %v (%s): suspect our proxy, network or resolver, not the targets",
			len(recent), active, g.cfg.Within, strings.Join(recent, ", "))}
	return recent
}

// Finding is the client_side_suspect finding, if one happened.
func (g *fleetGuard) Finding() *outcome.Finding {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.found
}

// fleetAlarm is a fleet-wide share of blocked or throttled answers that fired.
type fleetAlarm struct {
	Class    circuit.Class // Blocked or Throttled
	Share    float64       // of the attempts since the last look
	Attempts int64         // attempts since the last look
}

// Look judges the fleet's blocked and throttled share since the last look,
// at most once a second, from totals, the fleet's counts now. An alarm
// fires again only after its share fell below half its threshold.
func (g *fleetGuard) Look(now time.Time, totals func() fleetTotals) []fleetAlarm {
	if g.cfg.Off {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.lastLook) < time.Second {
		return nil
	}
	g.lastLook = now
	tot := totals()
	var delta fleetTotals
	var all int64
	for c := range numClasses {
		delta[c] = tot[c] - g.seen[c]
		if circuit.Class(c) != circuit.Excluded {
			all += delta[c]
		}
	}
	g.seen = tot
	var out []fleetAlarm
	if all < int64(g.cfg.AlarmMin) {
		return nil
	}
	for _, c := range []circuit.Class{circuit.Blocked, circuit.Throttled} {
		share := float64(delta[c]) / float64(all)
		switch {
		case share >= g.cfg.AlarmShare && !g.alarmOn[c]:
			g.alarmOn[c] = true
			out = append(out, fleetAlarm{Class: c, Share: share, Attempts: all})
		case share < g.cfg.AlarmShare/2:
			g.alarmOn[c] = false
		}
	}
	return out
}
