package early

import "time"

// Peers and PeerAge bound SlowedElsewhere's look at the fleet.
const (
	Peers   = 16
	PeerAge = 30 * time.Second
)

// SlowedElsewhere tells the crawler's own slowness from a site's: when a
// domain's latency slope would trip it, it looks at up to Peers other
// domains whose slope was evaluated within PeerAge of now, and counts how
// many of them are past their own slope limit now (SlowedNow). When most
// are, the latency climbed everywhere at once: the crawler's CPU, network
// or a stall, not the site. peers calls yield with every domain's tracker
// (self's among them, which is skipped) and the time, in unix nanos, its
// slope was last evaluated, until yield returns false; it looks at no more
// than 16 × Peers domains in all.
func SlowedElsewhere(self *Tracker, now time.Time, peers func(yield func(t *Tracker, evaluated int64) bool)) (slowed, of int) {
	since := now.Add(-PeerAge).UnixNano()
	looked := 0
	peers(func(t *Tracker, evaluated int64) bool {
		looked++
		if t != self && evaluated >= since {
			of++
			if t.SlowedNow() {
				slowed++
			}
		}
		return of < Peers && looked < 16*Peers
	})
	return slowed, of
}
