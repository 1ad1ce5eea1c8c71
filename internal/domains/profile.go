package domains

import (
	"fmt"
	"strings"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// numClasses is how many outcome classes there are.
const numClasses = int(circuit.Excluded) + 1

// profile is a circuit.Profile with what every domain of it reads,
// computed once and shared by the domains, which point to it.
type profile struct {
	circuit.Profile
	settings     circuit.Settings // Profile.Settings(), which its domains' in-process circuits share
	early        trackerSettings
	need         int // failures in a full window that trip the circuit (FailuresToTrip)
	lazy         int // quick successes a domain takes before it makes its tracker (lazy.go)
	blockedAfter int // Config.BlockedAfter (room.go)
}

func newProfile(p circuit.Profile, blockedAfter int) *profile {
	return &profile{Profile: p, settings: p.Settings(), early: earlySettings(p), need: p.Settings().FailuresToTrip(),
		lazy: lazyFor(p), blockedAfter: blockedAfter}
}

// earlySettings is the part of p the early warnings read.
func earlySettings(p circuit.Profile) trackerSettings {
	return trackerSettings{WindowSize: p.WindowSize, SlowCall: p.SlowCall, SlowCallRate: p.SlowCallRate,
		SlopeMultiple: p.SlopeMultiple, SlopeFloor: p.SlopeFloor, TimeoutMultiple: p.TimeoutMultiple,
		TimeoutAfter: p.TimeoutAfter, TimeoutFloor: p.TimeoutFloor}
}

// AddDomainProfile gives the hosts matching pattern profile p (see
// Config.Domains).
func (b *Set) AddDomainProfile(pattern string, p circuit.Profile) error {
	pattern = strings.ToLower(strings.TrimSpace(pattern))
	if pattern == "" || pattern == "." {
		return fmt.Errorf("breaker: Config.Domains: empty pattern; give a host or a suffix such as .example.com")
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("breaker: profile for %q: %w", pattern, err)
	}
	b.Domains = append(b.Domains, Override{Pattern: pattern, Profile: p, shared: newProfile(p, b.BlockedAfter)})
	return nil
}

// profileFor resolves host's profile: exact match, then longest suffix.
func (b *Set) profileFor(host string) *profile {
	best, bestLen := b.base, -1
	hostname := host
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		hostname = host[:i]
	}
	for _, o := range b.Domains {
		switch {
		case o.Pattern == host:
			return o.shared
		case o.Pattern[0] == '.':
			if (strings.HasSuffix(hostname, o.Pattern) || hostname == o.Pattern[1:]) && len(o.Pattern) > bestLen {
				best, bestLen = o.shared, len(o.Pattern)
			}
		}
	}
	return best
}
