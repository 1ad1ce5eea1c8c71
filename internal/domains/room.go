package domains

// room is how many requests d may have in flight: as many failures as its
// circuit (or its blocked hold) can still take before it stops the domain,
// at least one, so the circuit is always there to stop the next request.
// A domain with no good answer yet gets one (slow start): a site that hangs
// from its first request holds one of a shared LimitRule's slots, not all.
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
