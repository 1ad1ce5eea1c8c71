package testserver

import (
	"slices"
	"time"
)

// ProxyHit is one request a Proxy received, recorded when it arrived and
// the scenario decided what to do with it. A connection the proxy refused
// is not a hit: the kernel refused it, the proxy never saw it.
type ProxyHit struct {
	Seq  int       // 1 for the first request since StartProxy or Reset
	Time time.Time // arrival, by ProxyConfig.Now
	Host string    // the target's host:port, from the request's absolute URL
	Path string    // the target's URL path, without query
	// Mode is what the proxy did: ProxyHealthy or ProxyLatency forwarded
	// the request; ProxyAuth407, ProxyBadGateway and ProxyBlock403
	// answered it themselves; ProxyRefuse cut its connection with a reset
	// (a request already on an open connection when refusal began).
	Mode ProxyMode
	// Status is the status the client was sent: the target's, or the
	// proxy's own 407, 502 or 403 (502 too when forwarding failed). It is
	// 0 while a forwarded request is under way, and for a reset.
	Status int
	// Latency is the wait the proxy added before forwarding (ProxyLatency).
	Latency time.Duration
	// Forwarded is whether the proxy sent the request on to the target:
	// false for a mode that answers by itself, and for a ProxyLatency
	// request whose client went away during the wait.
	Forwarded bool
}

// proxyLog is a proxy's request log; the Proxy's mutex guards it.
type proxyLog struct {
	hits      []ProxyHit
	modes     [len(proxyModeNames)]int
	hosts     map[string]int
	forwarded int
}

func (l *proxyLog) reset() {
	*l = proxyLog{hosts: make(map[string]int)}
}

// add records h and returns its index, for setStatus.
func (l *proxyLog) add(h ProxyHit) int {
	h.Seq = len(l.hits) + 1
	l.hits = append(l.hits, h)
	l.modes[h.Mode]++
	l.hosts[h.Host]++
	return len(l.hits) - 1
}

// forward records that hit i is being sent on to its target.
func (l *proxyLog) forward(i, seq int) {
	if i < len(l.hits) && l.hits[i].Seq == seq {
		l.hits[i].Forwarded = true
		l.forwarded++
	}
}

// setStatus records the status hit i was answered with. A Reset since the
// hit was added leaves the new log alone.
func (l *proxyLog) setStatus(i, seq, status int) {
	if i < len(l.hits) && l.hits[i].Seq == seq {
		l.hits[i].Status = status
	}
}

// Requests returns a copy of every request since StartProxy or Reset, in
// order of arrival.
func (p *Proxy) Requests() []ProxyHit {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.log.hits)
}

// Count returns the number of requests the proxy received since StartProxy
// or Reset. Refused connections are not among them.
func (p *Proxy) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.log.hits)
}

// CountMode returns how many requests the proxy handled by mode m, e.g.
// CountMode(ProxyBlock403) block pages it answered itself.
func (p *Proxy) CountMode(m ProxyMode) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m < 0 || int(m) >= len(p.log.modes) {
		return 0
	}
	return p.log.modes[m]
}

// CountHost returns how many requests the proxy received for the target
// host (host:port, e.g. a Store's Host()).
func (p *Proxy) CountHost(host string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.hosts[host]
}

// Forwarded returns how many requests the proxy sent on to a target.
func (p *Proxy) Forwarded() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.forwarded
}
