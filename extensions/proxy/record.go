package proxy

import (
	"net/http"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// Attempt is one request through a proxy, as the transport saw it.
type Attempt struct {
	// Proxy is the proxy that carried it: its URL as Track reports it (or
	// as in Config.Proxies, or Colly's Request.ProxyURL), or its Name
	// (host:port, as in Snapshot).
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

// Unexplained reports whether a is a failure that its proxy or the site
// may have caused alike: a bare 502, 503 or 504, or an error with no
// answer that is not a failure to reach the proxy. Record leaves those to
// the next proxy to tell, or judges them by the proxies' records.
func (a Attempt) Unexplained() bool {
	return classify(a.Err, a.Status, a.Header) == notJudged && unexplained(a)
}

// Record charges a to its proxy and reports whether the proxy, not the
// site, explains its failure: then the attempt says nothing about the
// site, which never received it or would answer through another proxy,
// and it may be sent again through the rotation.
//
// What blames the proxy at once: a failure to reach it (connection, DNS,
// TLS), its refusal of the credentials (407), an error the proxy says is
// its own (RFC 9209 Proxy-Status). What one answer cannot blame, the view
// across proxies tells (with Domain given): a 401/403, or a bare 5xx,
// timeout or reset through a proxy failing most of what it carries, is
// left to the next proxy; answered there, the first proxy is charged
// (blocked, outlier); refused through more proxies than the pool may
// eject, or through every proxy that carries, the site refuses the
// client; failing through the next proxy too, the site fails. Either
// way, the site's answers are then its own, none sent again until a
// proxy is answered there. A failure through a proxy failing most of what
// it carries while the others carry most of theirs is left to tell the
// same way, and charged (outlier) once another proxy is answered there:
// never at once, as a site beginning to fail may answer its first
// failures through one proxy before the others'. Any other outcome is the
// site's; the proxy carried it.
//
// Enough failures eject the proxy (Config.Settings); the outcome of its
// probe restores it or ejects it again. An attempt that ends while its
// proxy is ejected counts in Stats alone; while its probe is out, the
// next attempt recorded for it is taken as the probe. A proxy not in the
// pool is not recorded.
func (p *Pool) Record(a Attempt) (proxyFault bool) {
	o := classify(a.Err, a.Status, a.Header)
	proxyFault = o.failure()
	p.mu.Lock()
	m := p.lookupLocked(a.Proxy)
	if m != nil {
		switch {
		case o == carried && a.Domain != "":
			o, proxyFault = p.compareLocked(m, a.Domain, a.Status == http.StatusUnauthorized || a.Status == http.StatusForbidden, a.Latency)
		case o == notJudged && unexplained(a):
			o, proxyFault = p.failedLocked(m, a.Domain)
		}
		p.recordLocked(m, o, a.Latency)
	}
	p.unlock()
	return m != nil && proxyFault
}

func (p *Pool) recordLocked(m *member, o outcome, latency time.Duration) {
	clk, now := p.cfg.Clock, p.cfg.Clock.Now()
	m.outcomes[o]++
	r := circuit.Result{Class: o.class(), Latency: latency}
	switch m.state {
	case circuit.Closed:
		if o == carried && m.held {
			m.held = false
			p.queue(event{kind: unheld, snap: m.snapshotLocked()})
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
			m.c = circuit.NewLocal(m.name, &p.circuit, nil)
			m.held = true
			p.pauseLocked(m, now, tr.Reason)
			return
		}
		if !m.backAt.IsZero() { // a stretch back in the rotation works off the streak
			m.streak = max(0, m.streak-int(now.Sub(m.backAt)/p.cfg.Settings.Cooldown))
		}
		p.ejected++
		p.ejectLocked(m, now, tr.Reason)
		if p.ejected == len(p.members) {
			p.pauseLocked(m, now, tr.Reason)
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
			p.queue(event{kind: restored, snap: m.snapshotLocked()})
		case circuit.Open:
			p.ejectLocked(m, now, tr.Reason)
		}
	}
}

// pauseLocked pauses the pool for a cooldown, m's trip (for reason)
// having made the client side the likely cause, and tells it.
func (p *Pool) pauseLocked(m *member, now time.Time, reason string) {
	cd := p.cfg.Settings.Cooldown
	p.paused.Store(now.Add(cd).UnixNano())
	p.queue(event{kind: clientSide, snap: m.snapshotLocked(), reason: reason, err: p.clientSideLocked(), cooldown: cd})
}

// ejectLocked takes m, whose circuit has just opened, out of the
// rotation for its next cooldown.
func (p *Pool) ejectLocked(m *member, now time.Time, reason string) {
	m.streak++
	m.ejections++
	cd := p.cooldown(m.streak)
	m.retryAt = now.Add(cd)
	m.c.HoldOpen(p.cfg.Clock, m.retryAt, reason)
	m.state, m.probes, m.held = circuit.Open, 0, false
	p.queue(event{kind: ejected, snap: m.snapshotLocked(), reason: reason, cooldown: cd})
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
