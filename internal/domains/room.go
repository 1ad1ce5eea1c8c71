package domains

// room is how many requests d may have in flight: as many as its circuit
// can still take failures before it trips, at least one. Every request in
// flight could fail; with no more than that in flight, the circuit is
// always there to stop the next one, whatever Colly's LimitRules do.
//
// A domain that has not answered a single request well yet gets one: a
// site that hangs from its first request then holds one of a shared
// LimitRule's slots, not all of them, while the others earn the timeout it
// will borrow (slow start).
//
// A run of blocked answers (401/403) shrinks the room the same way: a
// domain held after Config.BlockedAfter of them in a row has no more in
// flight than its hold can still stop, however its requests reach the
// breaker (a clone's are bounded by the room alone).
func (d *Domain) room() int {
	if d.LastOK.Load() == 0 {
		return 1
	}
	r := d.need - d.windowFailures()
	if s := d.blocked.Load(); s > 0 && d.blockedAfter > 0 {
		r = min(r, d.blockedAfter-int(s))
	}
	return max(1, r)
}

func (d *Domain) windowFailures() int { return d.Circuit.WindowFailures() }

// healthy reports whether d has answered well and its window holds no
// failure and no run of blocked answers: a request that waits for its
// room then waits for slots that free at the site's own pace.
func (d *Domain) Healthy() bool {
	return d.LastOK.Load() != 0 && d.windowFailures() == 0 && d.blocked.Load() == 0
}
