package domains

import (
	"cmp"
	"github.com/breakwater-crawl/breakwater/observe"
	"slices"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// Overview is every domain at a glance (observe.Overview).
type Overview = observe.Overview

// Overview returns the totals over every domain and the stats of the k
// worth a look (see Overview.Top); k ≤ 0 lists none.
func (b *Set) Overview(k int) Overview {
	now := b.Clock.Now()
	o := Overview{Outcomes: make(map[string]int64, numClasses)}
	var tot [numClasses]int64
	var top []ranked // at most 2k: cut back to the best k when full
	var floor ranked // the least of the best k at the last cut
	for d := range b.all {
		o.Domains++
		var attempts int64
		for c, n := range d.counts() {
			tot[c] += n
			attempts += n
		}
		o.Refused += int64(d.Refused.Load())
		snap, err := d.Circuit.Snapshot(b.Clock)
		if err != nil {
			snap = circuit.Snapshot{}
		}
		if int(snap.State) < len(o.States) {
			o.States[snap.State]++
		}
		o.Trips += int64(snap.Trips)
		ps := d.Pace.Stats(now)
		o.Pauses += int64(ps.Pauses)
		severity := 0
		switch {
		case snap.State == circuit.Open:
			severity = 5
		case snap.State == circuit.HalfOpen:
			severity = 4
		case !ps.HaltUntil.IsZero():
			severity = 3
		case snap.WindowFailures > 0:
			severity = 2
		case d.throttledInARow() > 0 || d.blockedInARow() > 0 ||
			ps.Gap > max(b.Pacing.MinGap, 0) || ps.Limit != max(b.Pacing.Parallelism, 0):
			severity = 1
		}
		if severity > 0 {
			o.Unhealthy++
		}
		if k <= 0 {
			continue // totals only: no domain is ranked
		}
		r := ranked{d: d, severity: severity, refused: int64(d.Refused.Load()), attempts: attempts}
		if floor.d == nil || rank(r, floor) < 0 {
			top = append(top, r)
			if len(top) == 2*k {
				top = best(top, k)
				floor = top[k-1]
			}
		}
	}
	dt := b.dormant.Totals()
	o.Domains += dt.Domains
	o.Compacted = dt.Domains
	o.States[circuit.Closed] += dt.Domains
	o.Refused += dt.Refused
	o.Trips += dt.Trips
	o.Pauses += dt.Pauses
	for c := range numClasses {
		o.Outcomes[circuit.Class(c).String()] = tot[c] + dt.Counts[c]
	}
	for _, r := range best(top, k) {
		o.Top = append(o.Top, b.statsOf(r.d, now))
	}
	slices.SortFunc(o.Top, func(x, y DomainStats) int { return strings.Compare(x.Domain, y.Domain) })
	return o
}

// statsOf is one live domain's DomainStats.
func (b *Set) statsOf(d *Domain, now time.Time) DomainStats {
	s := DomainStats{Domain: d.Name, Profile: d.Profile.Name, Outcomes: outcomes(d.counts()),
		Refused: int64(d.Refused.Load()), Pace: d.Pace.Stats(now), Timeout: d.Timeout()}
	if snap, err := d.Circuit.Snapshot(b.Clock); err == nil {
		s.State, s.Trips = snap.State, snap.Trips
		if snap.State == circuit.Open {
			s.RetryAt = snap.RetryAt
		}
	}
	s.Tracked, s.SuccessRate, s.MedianLatency = d.trackerStats()
	return s
}

// outcomes is DomainStats.Outcomes of counts by class.
func outcomes(counts [numClasses]int64) map[string]int64 {
	m := make(map[string]int64, numClasses)
	for c, n := range counts {
		if n > 0 {
			m[circuit.Class(c).String()] = n
		}
	}
	return m
}

// ranked is a domain as Overview ranks it.
type ranked struct {
	d        *Domain
	severity int
	refused  int64
	attempts int64
}

// best sorts rs most worth a look first (the severest, then the most
// refused, then the busiest) and keeps the first k of them.
func best(rs []ranked, k int) []ranked {
	slices.SortFunc(rs, rank)
	return rs[:min(len(rs), max(k, 0))]
}

// rank orders r before s if r is more worth a look.
func rank(r, s ranked) int {
	return cmp.Or(cmp.Compare(s.severity, r.severity), cmp.Compare(s.refused, r.refused),
		cmp.Compare(s.attempts, r.attempts), strings.Compare(r.d.Name, s.d.Name))
}
