package proxy

import (
	"math/bits"
	"net/http"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// Attempt is one request through a proxy, as the transport saw it.
type Attempt struct {
	// Proxy is the proxy that carried it: its URL as Track reports it (or
	// as in Config.Proxies, or Colly's Request.ProxyURL), or its Name.
	Proxy string
	// Domain is the site's host: with it, Record compares proxies on the
	// same site (a site refusing one proxy only blames that proxy).
	Domain string
	// Status is the answer's HTTP status, 0 when none came back; Header
	// the answer's header (may be nil); Err the round trip's error.
	Status int
	Header http.Header
	Err    error
	// Latency is how long the attempt took.
	Latency time.Duration
}

// Record charges a to its proxy and reports whether the proxy, not the
// site, explains its failure: then the attempt says nothing about the
// site, which never received it or would answer through another proxy,
// and it may be sent again through the rotation.
//
// What blames the proxy alone: a failure to reach it (connection, DNS,
// TLS), its refusal of the credentials (407), an error the proxy says is
// its own (RFC 9209 Proxy-Status), and, with Domain given, a 401/403 from
// a site that answers other proxies: the site refuses this proxy, not the
// client. A site's first 401/403s are their proxies' to explain until
// more proxies are refused there than the pool may eject (the site
// refuses the client) or one is answered (the refused ones are charged
// then). Any other outcome is the site's; the
// proxy carried it. Enough failures eject the proxy (Config.Settings); the
// outcome of its probe restores it or ejects it again. An attempt that
// ends while its proxy is ejected counts in Stats alone; while its probe
// is out, the next attempt recorded for it is taken as the probe. A proxy
// not in the pool is not recorded.
func (p *Pool) Record(a Attempt) (proxyFault bool) {
	o := classify(a.Err, a.Status, a.Header)
	proxyFault = o.failure()
	var evs events
	p.mu.Lock()
	m := p.lookupLocked(a.Proxy)
	if m != nil {
		if o == carried && a.Domain != "" {
			o, proxyFault = p.compareLocked(m, a.Domain, a.Status == http.StatusUnauthorized || a.Status == http.StatusForbidden, &evs)
		}
		p.recordLocked(m, o, a.Latency, &evs)
	}
	p.mu.Unlock()
	p.emit(evs)
	return m != nil && proxyFault
}

// compareLocked judges an answer m carried from domain against the other
// proxies' answers there (views): refused says it was a 401 or 403. The
// site's first refusal is not judged yet, but blamed on the proxy.
func (p *Pool) compareLocked(m *member, domain string, refused bool, evs *events) (outcome, bool) {
	v := p.views[domain]
	if !refused {
		if v != nil {
			v.ok.set(m.idx)
			for i := range v.refused.each() {
				if i != m.idx { // refused here, while m is answered: recorded not judged, now blocked
					p.members[i].outcomes[notJudged]--
					p.recordLocked(p.members[i], blocked, 0, evs)
				}
			}
			v.refused.clear()
			v.client = false
		}
		return carried, false
	}
	if v == nil {
		v = &view{ok: newMembers(len(p.members)), refused: newMembers(len(p.members))}
		p.views[domain] = v
	}
	v.ok.unset(m.idx)
	switch {
	case v.ok.any():
		return blocked, true // others are answered here
	case v.client:
		return carried, false
	}
	v.refused.set(m.idx)
	if v.refused.count() >= min(p.most+1, len(p.members)) {
		// Refused through more proxies than may be bad at once: the site
		// refuses the client, until a proxy is answered there again.
		v.refused.clear()
		v.client = true
		return carried, false
	}
	return notJudged, true
}

// view is what the proxies got from one domain that has answered 401 or
// 403 through one of them: which were answered since, which refused and
// not yet judged, and whether it refuses the client. Domains that never
// refuse have none.
type view struct {
	ok, refused members
	client      bool
}

// members is a set of members' indices.
type members []uint64

func newMembers(n int) members { return make(members, (n+63)/64) }
func (b members) set(i int)    { b[i/64] |= 1 << (i % 64) }
func (b members) unset(i int)  { b[i/64] &^= 1 << (i % 64) }
func (b members) clear()       { clear(b) }
func (b members) any() bool    { return b.count() > 0 }
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

func (p *Pool) recordLocked(m *member, o outcome, latency time.Duration, evs *events) {
	clk, now := p.cfg.Clock, p.cfg.Clock.Now()
	m.outcomes[o]++
	r := circuit.Result{Class: o.class(), Latency: latency}
	switch m.state {
	case circuit.Closed:
		if o == carried && m.held {
			m.held = false
			evs.add(event{kind: unheld, snap: m.snapshotLocked()})
		}
		t, ok := m.c.TryAllow()
		if !ok {
			return
		}
		tr, _ := m.c.Record(clk, t, r)
		if tr.To != circuit.Open {
			return
		}
		if p.ejected >= p.most {
			// One more ejection would pass MaxEjectedShare: keep the proxy,
			// with a fresh circuit, and say it is likely the client side.
			m.c = circuit.NewMemory(m.name, p.circuit, nil)
			m.held = true
			evs.add(event{kind: clientSide, snap: m.snapshotLocked(), reason: tr.Reason, err: p.clientSideLocked()})
			return
		}
		if !m.backAt.IsZero() { // a stretch back in the rotation works off the streak
			m.streak = max(0, m.streak-int(now.Sub(m.backAt)/p.cfg.Settings.Cooldown))
		}
		p.ejected++
		p.ejectLocked(m, now, tr.Reason, evs)
		if p.ejected == len(p.members) {
			evs.add(event{kind: clientSide, snap: m.snapshotLocked(), reason: tr.Reason, err: p.clientSideLocked()})
		}
	case circuit.HalfOpen:
		if m.probes == 0 {
			return // an attempt from before the ejection
		}
		m.probes--
		tr, _ := m.c.Record(clk, m.probe, r)
		if tr.From == tr.To {
			return // not all probes in, or one that says nothing
		}
		switch tr.To {
		case circuit.Closed:
			m.state, m.backAt = circuit.Closed, now
			p.ejected--
			evs.add(event{kind: restored, snap: m.snapshotLocked()})
		case circuit.Open:
			p.ejectLocked(m, now, tr.Reason, evs)
		}
	}
}

// ejectLocked takes m, whose circuit has just opened, out of the
// rotation for its next cooldown.
func (p *Pool) ejectLocked(m *member, now time.Time, reason string, evs *events) {
	m.streak++
	m.ejections++
	cd := p.cooldown(m.streak)
	m.retryAt = now.Add(cd)
	m.c.HoldOpen(p.cfg.Clock, m.retryAt, reason)
	m.state, m.probes, m.held = circuit.Open, 0, false
	evs.add(event{kind: ejected, snap: m.snapshotLocked(), reason: reason, cooldown: cd})
}

// cooldown is the ejection time of a proxy's streak-th ejection in a row:
// Cooldown × streak, capped at MaxCooldown, less a random share of up to
// Jitter.
func (p *Pool) cooldown(streak int) time.Duration {
	base := p.cfg.Settings.Cooldown
	cd := p.cfg.MaxCooldown
	if streak <= int(p.cfg.MaxCooldown/base) {
		cd = time.Duration(streak) * base
	}
	return cd - time.Duration(p.cfg.Jitter*p.draw()*float64(cd))
}
