package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/gocolly/colly/v2"
)

// ProxyFunc returns a drop-in for Colly's proxy.RoundRobinProxySwitcher
// over Config.Proxies: give it to Collector.SetProxyFunc, or to the Proxy
// of the http.Transport under a RoundTripper of your own. It rotates over
// the proxies not ejected and gives a proxy whose cooldown has passed its
// probe. The chosen proxy's URL (credentials and all, as Colly's switcher
// stores it) goes in the slot of a request passed through Track and, as
// Colly's switcher does, in the request's context under
// colly.ProxyURLKey, which Colly copies to Request.ProxyURL when the
// request it sent is the one the transport got (see Track for when it is
// not); a copy that has net/http's Cancel channel is left alone, since a
// transport goroutine reads it (rewriting it, as Colly's switcher does,
// is a data race). When every proxy is ejected it returns an error
// wrapping ErrAllEjected, and the request fails (Colly's OnError) instead
// of leaving without a proxy.
//
// Go's transport asks it again for each hop of a redirect.
func (p *Pool) ProxyFunc() colly.ProxyFunc {
	return func(r *http.Request) (*url.URL, error) {
		sl := slotOf(r)
		// A redirect's hop may go through a proxy its chain already used;
		// a request sent again to tell whose failure it was may not: that
		// proxy has told, and the site would get it twice.
		m, err := p.pick(sl, r.Response != nil)
		if err != nil {
			sl.forget() // no proxy carries this try: none is charged with it
			return nil, err
		}
		u, s := m.url, m.str
		sl.tell(m)
		if r.Cancel == nil {
			// A request with a Cancel channel is net/http's copy (a client
			// with a Timeout over a RoundTripper not its own): the context
			// could not reach Colly, and the transport's goroutine reading
			// Cancel would race with rewriting the request.
			ctx := context.WithValue(r.Context(), colly.ProxyURLKey, s)
			*r = *r.WithContext(ctx)
		}
		return u, nil
	}
}

// Ejected reports whether proxy (its URL, as in Config.Proxies or
// Request.ProxyURL, or its Snapshot.Name) is out of the rotation now, for
// a proxy function of the caller's own. false for a proxy whose cooldown has
// passed hands it its probe: send the request through it and Record the
// outcome (a probe not recorded within Settings.Cooldown is given up and
// handed out again). A proxy not in the pool is not ejected.
func (p *Pool) Ejected(proxy string) bool {
	p.mu.Lock()
	m := p.lookupLocked(proxy)
	now := p.cfg.Clock.Now()
	ejected := m != nil && (p.pausedAt(now) || !p.admitLocked(m, now))
	if m != nil && !ejected {
		m.sent++
	}
	p.unlock()
	return ejected
}

// PausedUntil returns when the pool's pause ends, zero while it is not
// paused: with more proxies failing than MaxEjectedShare lets it eject,
// the pool hands out no proxy for Settings.Cooldown (ClientSide says
// why). A breaker refuses requests at once meanwhile, instead of sending
// them to fail.
func (p *Pool) PausedUntil() time.Time {
	if until := p.paused.Load(); p.cfg.Clock.Now().UnixNano() < until {
		return time.Unix(0, until)
	}
	return time.Time{}
}

// pausedAt reports whether the pool is paused at now. Reading needs no
// lock: a breaker asks for every request.
func (p *Pool) pausedAt(now time.Time) bool { return now.UnixNano() < p.paused.Load() }

// pick chooses the next proxy of the rotation that admits a request, one
// not yet tried for it (sl) while one admits; one tried already only if
// reuse, or if none was.
func (p *Pool) pick(sl *slot, reuse bool) (*member, error) {
	p.mu.Lock()
	now := p.cfg.Clock.Now()
	n := len(p.members)
	if p.pausedAt(now) {
		err := fmt.Errorf("%w: no proxy is handed out before %s: %w", ErrAllEjected, time.Unix(0, p.paused.Load()).In(now.Location()).Format(time.RFC3339), p.clientSideLocked())
		p.unlock()
		return nil, err
	}
	// A request sent again to tell whose failure it was takes no proxy it
	// was tried through: the first pass only.
	retelling := !reuse && sl.count() > 0
	passes := 2 * n
	if retelling {
		passes = n
	}
	for i := range passes {
		idx := (p.next + i) % n
		m := p.members[idx]
		if (i >= n || !sl.has(m)) && p.admitLocked(m, now) {
			p.next = (idx + 1) % n
			m.sent++
			p.unlock()
			return m, nil
		}
	}
	if retelling {
		p.unlock()
		return nil, fmt.Errorf("%w for this request: every proxy that admits one has carried it", ErrAllEjected)
	}
	first := time.Time{}
	for _, m := range p.members {
		at := m.retryAt
		if m.state == circuit.HalfOpen {
			at = m.probeAt.Add(p.cfg.Settings.Cooldown)
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	p.unlock()
	return nil, fmt.Errorf("%w: all %d proxies are out of the rotation; the first may be probed at %s",
		ErrAllEjected, n, first.Format(time.RFC3339))
}

// admitLocked reports whether m takes a request now: in the rotation, or
// ejected with its cooldown passed and a probe slot free (the request is
// then its probe).
func (p *Pool) admitLocked(m *member, now time.Time) bool {
	switch m.state {
	case circuit.Closed:
		return true
	case circuit.Open:
		if now.Before(m.retryAt) {
			return false
		}
	case circuit.HalfOpen:
		if m.probes >= p.cfg.Settings.HalfOpenProbes {
			if now.Sub(m.probeAt) < p.cfg.Settings.Cooldown {
				return false
			}
			// The probe was never recorded (a redirect's hop, a caller
			// that asked Ejected and sent nothing): free its slot.
			m.probes--
			m.c.Record(p.cfg.Clock, m.probe, circuit.Result{Class: circuit.Excluded})
			p.queue(event{kind: lostProbe, snap: m.snapshotLocked()})
		}
	}
	t, tr, err := m.c.Allow(p.cfg.Clock)
	if err != nil {
		return false
	}
	if tr.To == circuit.HalfOpen {
		m.state = circuit.HalfOpen
		p.queue(event{kind: probing, snap: m.snapshotLocked()})
	}
	m.probe, m.probeAt = t, now
	m.probes++
	return true
}
