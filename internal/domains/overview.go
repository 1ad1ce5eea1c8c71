package domains

import (
	"container/heap"
	"sort"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// Overview is every domain at a glance: totals over all of them, and the
// full stats of the few worth a look. Unlike Stats, it costs no
// allocation per domain, and none at all per compacted domain, so a
// metrics scrape of a broad crawl can afford it.
type Overview struct {
	// Domains counts every domain the breaker knows, compacted ones
	// included; Compacted those compacted (see Config.IdleTTL).
	Domains   int
	Compacted int
	// States counts the domains in each state (index: Closed, Open,
	// HalfOpen).
	States [3]int
	// Unhealthy counts the domains that are not closed and healthy: open
	// or half-open, failures in the window, a Retry-After pause, a pace
	// slowed down by throttling, or throttled or blocked answers in a row.
	Unhealthy int
	// Outcomes, Refused, Trips and Pauses sum every domain's.
	Outcomes map[string]int64
	Refused  int64
	Trips    int64
	Pauses   int64
	// Top holds at most k domains' stats, sorted by domain: the unhealthy
	// first (open, then half-open, then paused, then the rest), and, if
	// fewer than k are, the busiest healthy ones (most attempts).
	Top []DomainStats
}

// Overview is what breaker.Breaker.Overview does (its doc says how).
func (b *Set) Overview(k int) Overview {
	now := b.clock.Now()
	o := Overview{Outcomes: make(map[string]int64, numClasses)}
	var tot [numClasses]int64
	top := rankHeap{}
	b.domains.Range(func(_, v any) bool {
		d := v.(*Domain)
		o.Domains++
		var attempts int64
		for c := range numClasses {
			n := d.Counts[c].Load()
			tot[c] += n
			attempts += n
		}
		o.Refused += d.Refused.Load()
		snap, err := d.Circuit.Snapshot(b.clock)
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
		case d.throttled.Load() > 0 || d.blocked.Load() > 0 ||
			ps.Gap > max(b.pacing.MinGap, 0) || ps.Limit != max(b.pacing.Parallelism, 0):
			severity = 1
		}
		if severity > 0 {
			o.Unhealthy++
		}
		if k > 0 {
			r := ranked{d: d, severity: severity, refused: d.Refused.Load(), attempts: attempts}
			if top.Len() < k {
				heap.Push(&top, r)
			} else if top[0].less(r) {
				top[0] = r
				heap.Fix(&top, 0)
			}
		}
		return true
	})
	dt := b.dormant.Totals()
	o.Domains += dt.Domains
	o.Compacted = dt.Domains
	o.States[circuit.Closed] += dt.Domains
	for c := range numClasses {
		tot[c] += dt.Counts[c]
	}
	o.Refused += dt.Refused
	o.Trips += dt.Trips
	o.Pauses += dt.Pauses
	for c := range numClasses {
		o.Outcomes[circuit.Class(c).String()] = tot[c]
	}
	for _, r := range top {
		o.Top = append(o.Top, b.statsOf(r.d, now))
	}
	sort.Slice(o.Top, func(i, j int) bool { return strings.Compare(o.Top[i].Domain, o.Top[j].Domain) < 0 })
	return o
}

// statsOf is one live domain's DomainStats.
func (b *Set) statsOf(d *Domain, now time.Time) DomainStats {
	s := DomainStats{Domain: d.Name, Profile: d.Profile.Name, Outcomes: make(map[string]int64, numClasses),
		Refused: d.Refused.Load(), Pace: d.Pace.Stats(now), Timeout: time.Duration(d.Timeout.Load())}
	if snap, err := d.Circuit.Snapshot(b.clock); err == nil {
		s.State, s.Trips = snap.State, snap.Trips
		if snap.State == circuit.Open {
			s.RetryAt = snap.RetryAt
		}
	}
	for c := range numClasses {
		if n := d.Counts[c].Load(); n > 0 {
			s.Outcomes[circuit.Class(c).String()] = n
		}
	}
	s.Tracked, s.SuccessRate, s.MedianLatency = d.tracker.Stats()
	return s
}

// ranked is a domain as Overview ranks it.
type ranked struct {
	d        *Domain
	severity int
	refused  int64
	attempts int64
}

// less says r is less worth a look than s.
func (r ranked) less(s ranked) bool {
	switch {
	case r.severity != s.severity:
		return r.severity < s.severity
	case r.refused != s.refused:
		return r.refused < s.refused
	case r.attempts != s.attempts:
		return r.attempts < s.attempts
	}
	return r.d.Name > s.d.Name
}

// rankHeap keeps the k most worth a look, the least of them on top.
type rankHeap []ranked

func (h rankHeap) Len() int           { return len(h) }
func (h rankHeap) Less(i, j int) bool { return h[i].less(h[j]) }
func (h rankHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rankHeap) Push(x any)        { *h = append(*h, x.(ranked)) }
func (h *rankHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
