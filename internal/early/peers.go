package early

import "time"

// Peers and PeerAge bound SlowedElsewhere's look at the fleet.
const (
	Peers   = 16
	PeerAge = 30 * time.Second
)

// SlowedElsewhere tells the crawler's own slowness from a site's: of up to
// Peers other domains whose slope was evaluated within PeerAge, it counts
// those slowed now. peers yields each domain's tracker and when its slope
// was last evaluated (unix nanos).
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
