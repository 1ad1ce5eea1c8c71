package testserver

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// ProxyMode is how a Proxy treats what it is asked to forward: the ways a
// proxy of a crawler's pool goes bad while the sites behind it are fine.
type ProxyMode int

const (
	// ProxyHealthy forwards every request and hands back the site's answer.
	ProxyHealthy ProxyMode = iota
	// ProxyRefuse resets every connection as soon as it is accepted: the
	// client's request fails before any HTTP answer (a dead proxy).
	ProxyRefuse
	// ProxyAuth answers 407 Proxy Authentication Required (credentials
	// expired or the plan ran out).
	ProxyAuth
	// ProxyBadGateway answers 502 without reaching the site (the proxy's
	// own upstream failing).
	ProxyBadGateway
	// ProxySlow forwards after waiting Delay.
	ProxySlow
	// ProxyBlocked answers 403 with BlockPage for every site, without
	// reaching it: an exit address the sites have banned.
	ProxyBlocked
)

var proxyModeNames = [...]string{"healthy", "refuse", "auth", "bad-gateway", "slow", "blocked"}

// String returns the mode's name.
func (m ProxyMode) String() string {
	if m >= 0 && int(m) < len(proxyModeNames) {
		return proxyModeNames[m]
	}
	return fmt.Sprintf("ProxyMode(%d)", int(m))
}

// ProxyConfig configures a Proxy.
type ProxyConfig struct {
	// Mode is what the proxy does from request After+1 on; the first After
	// requests are forwarded healthy.
	Mode  ProxyMode
	After int
	// Delay is what ProxySlow waits before forwarding.
	Delay time.Duration
}

// Proxy is a forward HTTP proxy on its own port of 127.0.0.1 that degrades
// on command, for crawls through a pool of proxies some of which are bad.
// Set it as a collector's proxy (colly's SetProxy, SetProxyFunc or
// proxy.RoundRobinProxySwitcher with Proxy.URL()); it forwards plain HTTP
// requests in absolute form to the loopback stores behind it and counts
// what it was asked and what it forwarded.
type Proxy struct {
	ln    net.Listener
	srv   *http.Server
	fwd   *http.Transport
	url   string
	mu    sync.Mutex
	cfg   ProxyConfig
	seen  int // requests (and refused connections) since the mode was set
	asked atomic.Int64
	sent  atomic.Int64
	wg    sync.WaitGroup
}

// StartProxy starts a proxy on a free port of 127.0.0.1.
func StartProxy(cfg ProxyConfig) (*Proxy, error) {
	if cfg.Mode < ProxyHealthy || cfg.Mode > ProxyBlocked {
		return nil, fmt.Errorf("testserver: proxy mode %d is not one of healthy, refuse, auth, bad-gateway, slow, blocked", int(cfg.Mode))
	}
	if cfg.After < 0 || cfg.Delay < 0 {
		return nil, fmt.Errorf("testserver: proxy After (%d) and Delay (%v) must not be negative", cfg.After, cfg.Delay)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testserver: proxy: listen on 127.0.0.1: %w", err)
	}
	p := &Proxy{cfg: cfg, url: "http://" + ln.Addr().String(), fwd: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}}
	p.ln = &refusingListener{Listener: ln, p: p}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_ = p.srv.Serve(p.ln)
	}()
	return p, nil
}

// URL is the proxy's address, as a collector's proxy URL.
func (p *Proxy) URL() string { return p.url }

// SetMode switches what the proxy does, at once (After counts again from
// now).
func (p *Proxy) SetMode(cfg ProxyConfig) {
	p.mu.Lock()
	p.cfg, p.seen = cfg, 0
	p.mu.Unlock()
}

// Asked is how many requests reached the proxy, refused connections
// included.
func (p *Proxy) Asked() int { return int(p.asked.Load()) }

// Forwarded is how many requests the proxy sent on to a site.
func (p *Proxy) Forwarded() int { return int(p.sent.Load()) }

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.fwd.CloseIdleConnections()
	p.wg.Wait()
	return err
}

// next counts one request and returns what to do with it.
func (p *Proxy) next() ProxyConfig {
	p.asked.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen++
	cfg := p.cfg
	if p.seen <= cfg.After {
		cfg.Mode = ProxyHealthy
	}
	return cfg
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	cfg := p.next()
	switch cfg.Mode {
	case ProxyRefuse:
		// Switched to refusing on a connection already open: cut it.
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				resetClose(c)
				return
			}
		}
		http.Error(w, "proxy refusing", http.StatusBadGateway)
		return
	case ProxyAuth:
		w.Header().Set("Proxy-Authenticate", `Basic realm="testserver"`)
		http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
		return
	case ProxyBadGateway:
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	case ProxyBlocked:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write(BlockPage())
		return
	case ProxySlow:
		select {
		case <-time.After(cfg.Delay):
		case <-r.Context().Done():
			return
		}
	}
	p.forward(w, r)
}

// forward sends r on to the site its absolute URL names, which must be on
// loopback (a test's traffic stays on the machine), and copies back the
// answer.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	if !r.URL.IsAbs() || r.URL.Scheme != "http" {
		http.Error(w, "testserver proxy: only plain http requests in absolute form are forwarded", http.StatusBadRequest)
		return
	}
	if err := checkLoopback(r.URL.Host); err != nil {
		http.Error(w, "testserver proxy: "+err.Error(), http.StatusForbidden)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL = &url.URL{Scheme: r.URL.Scheme, Host: r.URL.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade"} {
		out.Header.Del(h)
	}
	p.sent.Add(1)
	resp, err := p.fwd.RoundTrip(out)
	if err != nil {
		http.Error(w, "testserver proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// refusingListener resets, as soon as it is accepted, every connection that
// arrives while the proxy refuses.
type refusingListener struct {
	net.Listener
	p *Proxy
}

func (l *refusingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.p.mu.Lock()
		refuse := l.p.cfg.Mode == ProxyRefuse && l.p.seen >= l.p.cfg.After
		if refuse {
			l.p.seen++
		}
		l.p.mu.Unlock()
		if !refuse {
			return c, nil
		}
		l.p.asked.Add(1)
		resetClose(c)
	}
}

// resetClose closes c with a reset rather than an orderly close: the
// client reads "connection reset by peer".
func resetClose(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}
