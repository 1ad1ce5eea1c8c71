package proxy

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// Record charges one attempt's outcome to proxy (its URL as Track,
// Config.Proxies or Colly's Request.ProxyURL give it, or its Name),
// latency being how long the attempt took. Carried counts as the proxy's
// health, the failures (Outcome.Failure) against it, NotJudged in Stats
// alone. Enough failures eject the proxy (Config.Settings); the outcome
// of its probe restores it or ejects it again. An attempt that ends while
// its proxy is ejected counts in Stats alone; while its probe is out, the
// next attempt recorded for it is taken as the probe (a request sent
// before the ejection normally ends long before the cooldown does). The
// error says the proxy or the outcome is unknown; nothing is recorded
// then.
func (p *Pool) Record(proxy string, o Outcome, latency time.Duration) error {
	if o >= numOutcomes {
		return fmt.Errorf("proxy: Record: unknown outcome %d: give one of Carried … NotJudged", uint8(o))
	}
	var evs events
	p.mu.Lock()
	m := p.lookupLocked(proxy)
	if m == nil {
		p.mu.Unlock()
		return fmt.Errorf("proxy: Record: %s is not in the pool: give the proxy's URL as Request.ProxyURL carries it, or its Name", redact(proxy))
	}
	p.recordLocked(m, o, latency, &evs)
	p.mu.Unlock()
	p.emit(evs)
	return nil
}

func (p *Pool) recordLocked(m *member, o Outcome, latency time.Duration, evs *events) {
	clk, now := p.cfg.Clock, p.cfg.Clock.Now()
	m.outcomes[o]++
	r := circuit.Result{Class: o.class(), Latency: latency}
	switch m.state {
	case circuit.Closed:
		if o == Carried && m.held {
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

// redact names proxy for an error message without its credentials.
func redact(proxy string) string {
	if u, err := url.Parse(proxy); err == nil && u.Host != "" {
		return Name(u)
	}
	if strings.Contains(proxy, "@") {
		return "a proxy (credentials withheld)"
	}
	return fmt.Sprintf("%q", proxy)
}
