package domains

import "time"

// Room is how many requests d may have in flight: as many failures as its
// circuit (or its blocked hold) can still take before it stops the domain,
// at least one, so the circuit is always there to stop the next request.
// A domain with no good answer yet gets one (slow start): a site that hangs
// from its first request holds one of a shared LimitRule's slots, not all.
func (d *Domain) Room() int {
	if d.lastOK.Load() == 0 {
		return 1
	}
	r := d.Profile.need - d.Circuit.WindowFailures()
	if s := d.blockedInARow(); s > 0 && d.Profile.blockedAfter > 0 {
		r = min(r, d.Profile.blockedAfter-int(s))
	}
	if c := d.shareCap(); c > 0 {
		r = min(r, int(c))
	}
	return max(1, r)
}

// Lend notes that a request of d's, still on the wire but slower than
// the site's usual (Slow), gives its slot of a shared LimitRule of
// parallelism p to other domains' requests. From then on d's room is at
// most p, so that the site never has more in flight than the rule allows
// it: without lent slots the rule keeps it there, and the cap never binds.
func (d *Domain) Lend(p int) { d.rareMade().shareCap.Store(int32(p)) }

// shareCap is the cap Lend set, 0 before.
func (d *Domain) shareCap() int32 {
	if r := d.rare.Load(); r != nil {
		return r.shareCap.Load()
	}
	return 0
}

// Healthy reports whether d has answered well and its window holds no
// failure seen in this process and no run of blocked answers: a request
// that waits for its room then waits for slots that free at the site's
// own pace. Failures a checkpoint restored (a dead run's requests in
// flight among them) still narrow the room, but do not count here until
// d fails again: a resumed crawl of a healthy site must not refuse what
// waits for that room.
func (d *Domain) Healthy() bool {
	return d.lastOK.Load() != 0 && (d.Circuit.WindowFailures() == 0 || !d.failedNow()) && d.blockedInARow() == 0
}

// TimeoutFor is the request timeout the breaker's transport applies to d:
// its adaptive timeout, else the fleet's prior (deadline.Prior) if its
// profile sets one, 0 for none.
func (b *Set) TimeoutFor(d *Domain) time.Duration {
	if t := d.Timeout(); t > 0 {
		return t
	}
	if d.Profile.TimeoutMultiple <= 0 {
		return 0
	}
	return b.prior.For(d.Profile.TimeoutFloor)
}

// HandBack says when a throttled request's re-send could leave, if that
// is beyond the resend horizon (Config.ResendHorizon): the later of the
// domain's pause and its next start slot by the pace.
func (b *Set) HandBack(d *Domain, now time.Time) (time.Time, bool) {
	if b.ResendHorizon <= 0 {
		return time.Time{}, false
	}
	due := d.Pace.Earliest()
	if due.Sub(now) <= b.ResendHorizon {
		return time.Time{}, false
	}
	return due, true
}
