package proxy

import (
	"context"
	"errors"
	"math/bits"
	"slices"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// The view across proxies: what the proxies that reached one site got
// from it, which tells a proxy's failure from the site's.

// unexplained reports whether a is a failure that the proxy or the site
// may have caused alike: a bare 502, 503 or 504, or an error with no
// answer that is not the crawl's own cancellation.
func unexplained(a Attempt) bool {
	if a.Status != 0 {
		return a.Status >= 500
	}
	return a.Err != nil && !errors.Is(a.Err, context.Canceled) && !errors.Is(a.Err, ErrAllEjected)
}

// failedLocked judges a failure m brought back from domain that one answer
// cannot blame. A failure through a proxy failing at least half of its
// latest attempts while the others do not (a suspect; the half alone
// early in a crawl), a site's first answer through the pool, or a
// proxy's first at a site that answered the others, is left to the next
// proxy to tell, as a refusal is: answered there, the suspects are
// charged (outliers); failing through a proxy that is no suspect, or
// through more suspects than may be bad at once, the site fails and is
// charged, with no failure sent again until a proxy is answered there.
// Only a later answer tells: a proxy whose record looks an outlier's is
// not charged at once, since a site beginning to fail may answer its
// first failures through one proxy before the others'. A failure through
// a proxy already ejected (sent before the ejection) is sent again. Else
// not judged, the site's to count.
func (p *Pool) failedLocked(m *member, domain string) (outcome, bool) {
	m.recent.add(true)
	if v := p.views[domain]; v != nil && v.failing {
		// Failing through several proxies: the site's, whatever m's own
		// record (one that carried little before the site began to fail
		// has little else in it).
		return notJudged, false
	}
	if m.state != circuit.Closed {
		// Sent before its proxy was ejected for failing, answered after:
		// the proxy's like the failures that ejected it, wherever it went
		// (a site no proxy has answered yet included). The rotation, which
		// no longer hands it out, tells.
		return notJudged, true
	}
	if len(p.members) < 2 {
		return notJudged, false
	}
	v := p.views[domain]
	fresh := v == nil // the site's first answer through the pool, as far as it remembers
	if fresh {
		v = p.viewLocked(domain)
	}
	// New here: the site answered other proxies but never m lately.
	newHere := v.ok.count() > v.ok.count1(m.idx) && v.ok.count1(m.idx) == 0
	suspect := (fresh || newHere || p.failingAloneLocked(m)) && !m.held && p.carryingLocked() >= 2 // m is closed (above)
	switch {
	case v.failing:
		return notJudged, false
	case !suspect && v.failed.count() > v.failed.count1(m.idx):
		// Failing through the next proxy too, one that carries most of
		// what it is given: the site fails.
		clear(v.failed)
		v.failing = true
		return notJudged, false
	case !suspect:
		return notJudged, false
	}
	if p.settledLocked(v.failed, m.idx) {
		v.failing = true // through more suspects than may be bad at once
		return notJudged, false
	}
	v.failedSince = p.cfg.Clock.Now()
	return notJudged, true
}

// settledLocked adds member i to pending, the proxies whose refusals or
// failures at a site are left to tell, and reports whether that settles
// it as the site's: pending through more proxies than may be bad at once,
// or through every proxy that carries. pending is then emptied.
func (p *Pool) settledLocked(pending members, i int) bool {
	pending.set(i)
	if pending.count() < min(p.most+1, p.carryingLocked()) {
		return false
	}
	clear(pending)
	return true
}

// chargeLocked charges each member of pending but i, recorded not judged,
// with o: the site answered another proxy since. A failure (outlier) is
// charged only to a proxy failing at least half of its latest attempts:
// one that carries most of what it is given failed at the site's moment
// (a site beginning to fail or hang), and is not charged at each such
// site. pending is then emptied.
func (p *Pool) chargeLocked(pending members, i int, o outcome) {
	for j := range pending.each() {
		if fails, n := p.members[j].recent.count(); o == outlier && 2*fails < n {
			continue
		}
		if j != i {
			p.members[j].outcomes[notJudged]--
			p.recordLocked(p.members[j], o, 0)
		}
	}
	clear(pending)
}

// failingAloneLocked reports whether m fails at least half of its latest
// attempts (at least one) while the other proxies, by the
// median of their failure shares, fail less than a third as often. The
// median, so that other bad proxies do not hide this one (Envoy's
// success-rate outlier detection compares with the pool's statistics
// likewise). Before the others have outlierMin attempts between them,
// the half alone decides.
func (p *Pool) failingAloneLocked(m *member) bool {
	fails, n := m.recent.count()
	if fails == 0 || 2*fails < n {
		return false
	}
	var shares []float64
	on := 0
	for _, o := range p.members {
		if f, k := o.recent.count(); o != m && k > 0 {
			shares = append(shares, float64(f)/float64(k))
			on += k
		}
	}
	if on < outlierMin {
		return true
	}
	slices.Sort(shares)
	return 3*shares[len(shares)/2] <= float64(fails)/float64(n)
}

// outlierMin is the fewest judged attempts of the other proxies, between
// them, before a proxy's failure share is compared with theirs.
const outlierMin = 3

// recent is a proxy's latest judged attempts (at most 20), failures as set
// bits.
type recent struct {
	bits uint32
	n    uint8
}

func (r *recent) add(failed bool) {
	r.bits <<= 1
	if failed {
		r.bits |= 1
	}
	r.n = min(r.n+1, 20)
}

// count is the failures and attempts r holds.
func (r recent) count() (fails, n int) {
	mask := uint32(1)<<r.n - 1
	return bits.OnesCount32(r.bits & mask), int(r.n)
}

// compareLocked judges an answer m carried from domain against the other
// proxies' answers there (views): refused says it was a 401 or 403. The
// site's first refusal is not judged yet, but blamed on the proxy.
func (p *Pool) compareLocked(m *member, domain string, refused bool, latency time.Duration) (outcome, bool) {
	v := p.views[domain]
	now := p.cfg.Clock.Now()
	if !refused {
		m.recent.add(false)
		if v == nil && len(p.members) > 1 {
			v = p.viewLocked(domain)
		}
		if v != nil {
			v.ok.set(m.idx)
			// Refused or failing here while m is answered: the proxies'
			// own.
			p.chargeLocked(v.refused, m.idx, blocked)
			v.client = false
			if now.Add(-latency).Before(v.failedSince) {
				// Sent before the failures left to tell: the site may have
				// begun to fail since; only a later answer tells.
				return carried, false
			}
			p.chargeLocked(v.failed, m.idx, outlier)
			v.failing = false
		}
		return carried, false
	}
	if m.state != circuit.Closed || m.held {
		// Refused through a proxy out of the rotation (a request sent
		// before its ejection): no evidence about the site.
		return notJudged, true
	}
	if v == nil {
		v = p.viewLocked(domain)
	}
	// Others answered here lately, or none: the site may have begun to
	// refuse the client since, so the refusal is not m's yet. The next
	// proxy tells: answered, m is charged (above); refused, it joins.
	v.ok.unset(m.idx)
	if v.client {
		return carried, false
	}
	if p.settledLocked(v.refused, m.idx) {
		v.client = true // until a proxy is answered there again
		return carried, false
	}
	return notJudged, true
}

// carryingLocked is how many proxies carry requests now: in the rotation
// and not failing (held), at least one.
func (p *Pool) carryingLocked() int {
	n := 0
	for _, m := range p.members {
		if m.state == circuit.Closed && !m.held {
			n++
		}
	}
	return max(n, 1)
}

// viewLocked makes domain's view. The views are bounded: past maxViews
// they are forgotten together, and judged afresh.
func (p *Pool) viewLocked(domain string) *view {
	if len(p.views) >= maxViews {
		clear(p.views)
	}
	n := len(p.members)
	v := &view{ok: newMembers(n), refused: newMembers(n), failed: newMembers(n)}
	p.views[domain] = v
	return v
}

// maxViews is the most domains whose proxies' answers a pool remembers.
const maxViews = 4096

// view is what the proxies got from one domain lately: which were
// answered, which refused (401/403) and not yet judged, and whether it
// refuses the client.
type view struct {
	ok, refused, failed members
	client, failing     bool      // it refuses the client; it fails through several proxies
	failedSince         time.Time // when the latest failure was left to tell
}

// members is a set of members' indices.
type members []uint64

func newMembers(n int) members { return make(members, (n+63)/64) }
func (b members) set(i int)    { b[i/64] |= 1 << (i % 64) }
func (b members) unset(i int)  { b[i/64] &^= 1 << (i % 64) }

// count1 is 1 if i is in b, else 0.
func (b members) count1(i int) int { return int(b[i/64] >> (i % 64) & 1) }
func (b members) count() int {
	n := 0
	for _, x := range b {
		n += bits.OnesCount64(x)
	}
	return n
}

// each yields the indices in b.
func (b members) each() func(func(int) bool) {
	return func(yield func(int) bool) {
		for w, x := range b {
			for ; x != 0; x &= x - 1 {
				if !yield(w*64 + bits.TrailingZeros64(x)) {
					return
				}
			}
		}
	}
}
