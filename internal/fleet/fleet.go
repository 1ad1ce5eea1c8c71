// Package fleet judges the whole fleet of domains rather than each one:
// many domains tripping at once on network failures while none succeeds is
// the client (proxy, network, resolver), not the targets; a large share of
// blocked or throttled answers across every domain is the client's doing
// too. The breaker composes one Guard; its user-facing settings are
// Config, which breaker.FleetGuard names.
package fleet

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/outcome"
)

// Config judges the whole fleet of domains rather than each one
// (breaker.FleetGuard).
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
type Config struct {
	Share      float64
	Within     time.Duration
	MinDomains int
	Pause      time.Duration
	Active     time.Duration
	AlarmShare float64
	AlarmMin   int
	Off        bool
}

// Defaults are the settings a zero field takes.
var Defaults = Config{Share: 0.5, Within: time.Minute, MinDomains: 3, Active: 5 * time.Minute, AlarmShare: 0.5, AlarmMin: 20}

// Normalise fills the defaults of c's zero fields and rejects values out
// of range, saying which and why.
func (c Config) Normalise() (Config, error) {
	d := Defaults
	if c.Share == 0 {
		c.Share = d.Share
	}
	if c.Within == 0 {
		c.Within = d.Within
	}
	if c.MinDomains == 0 {
		c.MinDomains = d.MinDomains
	}
	if c.Active == 0 {
		c.Active = d.Active
	}
	if c.AlarmShare == 0 {
		c.AlarmShare = d.AlarmShare
	}
	if c.AlarmMin == 0 {
		c.AlarmMin = d.AlarmMin
	}
	switch {
	case c.Share < 0 || c.Share > 1 || c.AlarmShare < 0 || c.AlarmShare > 1:
		return c, fmt.Errorf("FleetGuard shares must be in (0, 1]: Share %v, AlarmShare %v", c.Share, c.AlarmShare)
	case c.Within < 0 || c.Pause < 0 || c.Active < 0 || c.MinDomains < 1 || c.AlarmMin < 1:
		return c, fmt.Errorf("FleetGuard %+v: durations must be positive, MinDomains and AlarmMin at least 1", c)
	}
	return c, nil
}

const numClasses = int(circuit.Excluded) + 1

// Totals are attempts per outcome class, summed over every domain.
type Totals [numClasses]int64

// Guard is the fleet-wide judgement of one breaker.
type Guard struct {
	cfg Config

	mu        sync.Mutex
	trips     map[string]time.Time // domain → its latest trip
	since     map[string]time.Time // domain → when the failures that tripped it began
	suspectAt time.Time            // the latest client_side_suspect
	found     *outcome.Finding

	lastLook time.Time
	seen     Totals // fleet totals at the last look
	alarmOn  [numClasses]bool
}

// New returns a guard judging by c (normalised).
func New(c Config) *Guard { return &Guard{cfg: c} }

// Config is the guard's settings.
func (g *Guard) Config() Config { return g.cfg }

// Tripped notes the client-side trip (no answer from the site: a trip on
// answers is never the fleet's) of domain at at, of failures that began
// at since, with active domains active now; succeeded reports whether a
// request to one of them that left at or after a time succeeded. When the
// fleet, not the domain, is the problem (client_side_suspect), it returns
// the domains tripped within the window, sorted, and keeps the finding for
// the run's outcome; otherwise nil.
func (g *Guard) Tripped(domain string, at, since time.Time, active int, succeeded func(time.Time) bool) []string {
	if g.cfg.Off {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.trips == nil {
		g.trips, g.since = map[string]time.Time{}, map[string]time.Time{}
	}
	g.trips[domain], g.since[domain] = at, since
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

// Finding is the client_side_suspect finding for the run's outcome, if
// one happened.
func (g *Guard) Finding() *outcome.Finding {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.found
}

// Alarm is a fleet-wide share of blocked or throttled answers that fired.
type Alarm struct {
	Class    circuit.Class // Blocked or Throttled
	Share    float64       // of the attempts since the last look
	Attempts int64         // attempts since the last look
}

// Look judges the fleet's blocked and throttled share since the last look,
// at most once a second: totals (asked only then) are the fleet's counts
// now. It returns the alarms that fire; one fires again only after its
// share fell below half its threshold.
func (g *Guard) Look(now time.Time, totals func() Totals) []Alarm {
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
	var delta Totals
	var all int64
	for c := range numClasses {
		delta[c] = tot[c] - g.seen[c]
		if circuit.Class(c) != circuit.Excluded {
			all += delta[c]
		}
	}
	g.seen = tot
	var out []Alarm
	if all < int64(g.cfg.AlarmMin) {
		return nil
	}
	for _, c := range []circuit.Class{circuit.Blocked, circuit.Throttled} {
		share := float64(delta[c]) / float64(all)
		switch {
		case share >= g.cfg.AlarmShare && !g.alarmOn[c]:
			g.alarmOn[c] = true
			out = append(out, Alarm{Class: c, Share: share, Attempts: all})
		case share < g.cfg.AlarmShare/2:
			g.alarmOn[c] = false
		}
	}
	return out
}
