package testserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ErrProxyClosed is returned by SetScenario, SetMode and Reset on a Proxy
// that has been closed.
var ErrProxyClosed = errors.New("testserver: proxy closed")

// ProxyConfig configures a Proxy. The zero ProxyConfig is a healthy proxy
// without credentials on a free port of 127.0.0.1.
type ProxyConfig struct {
	// Scenario is the behaviour from the first request; see SetScenario.
	Scenario ProxyScenario

	// User and Password, if User is not empty, are the credentials the
	// proxy requires in a Proxy-Authorization: Basic header, as a client
	// sends them for a proxy URL of the form http://user:password@host:port.
	// A request without them is answered 407 (logged as ProxyAuth407)
	// whatever the scenario. They are never forwarded to the target.
	User, Password string

	// Now is the clock for hit times; nil means time.Now. The wait of
	// ProxyLatency uses a real timer regardless.
	Now func() time.Time

	// Admin serves the admin endpoints (see ProxyAdminHelp) to requests
	// addressed to the proxy itself, in origin form (GET /_admin/stats).
	// They are not logged. A refusing proxy has no listener, so it cannot
	// be reached there until its scenario is switched from code.
	Admin bool
}

// Proxy is a forward HTTP proxy on its own port of 127.0.0.1 that degrades
// on command, for crawls through a pool of real local proxies some of
// which are bad. Give URL() to a collector (colly's SetProxy, SetProxyFunc,
// proxy.RoundRobinProxySwitcher) or to http.Transport.Proxy. It forwards
// plain-HTTP requests in absolute form (what a client sends through an
// http:// proxy for an http:// URL) to loopback targets only; it does not
// tunnel CONNECT (https targets), answering it 501.
//
// A Proxy is safe for concurrent use; Close it when done.
type Proxy struct {
	now   func() time.Time
	user  string // the expected Proxy-Authorization value; "" for none
	admin bool
	addr  string // 127.0.0.1:port, kept across refusals
	srv   *http.Server
	fwd   *http.Transport
	ctx   context.Context // cancelled by Close: ends every wait and forward
	stop  context.CancelFunc

	closeOnce sync.Once
	closeErr  error
	handlers  sync.WaitGroup // requests inside serve
	serving   sync.WaitGroup // goroutines running srv.Serve

	mu     sync.Mutex
	closed bool
	sc     ProxyScenario
	seen   int          // requests since the scenario was set
	ln     net.Listener // nil while refusing
	hold   *portHold    // while refusing: the port, bound and not listening
	conns  map[net.Conn]http.ConnState
	log    proxyLog
}

// StartProxy starts a proxy on a free port of 127.0.0.1. A proxy whose
// scenario refuses at once has reserved its port and stopped listening on
// it before StartProxy returns.
func StartProxy(cfg ProxyConfig) (*Proxy, error) {
	if err := cfg.Scenario.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testserver: proxy: listen on 127.0.0.1: %w", err)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	ctx, stop := context.WithCancel(context.Background())
	p := &Proxy{
		now:   now,
		admin: cfg.Admin,
		addr:  ln.Addr().String(),
		fwd:   &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64, DisableCompression: true},
		ctx:   ctx,
		stop:  stop,
		sc:    cfg.Scenario,
		conns: make(map[net.Conn]http.ConnState),
	}
	if cfg.User != "" {
		p.user = "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg.User+":"+cfg.Password))
	}
	p.log.reset()
	p.srv = &http.Server{
		Handler:           http.HandlerFunc(p.serve),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // the proxy never logs on its own
		ConnState:         p.connState,
	}
	p.mu.Lock()
	p.serveLocked(ln)
	err = p.applyLocked()
	p.mu.Unlock()
	if err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

// URL returns the proxy's URL, "http://127.0.0.1:PORT", for a collector's
// proxy setting. It stays the same while the proxy refuses and after.
func (p *Proxy) URL() string { return "http://" + p.addr }

// Host returns the proxy's host:port, the name a report gives it.
func (p *Proxy) Host() string { return p.addr }

// Scenario returns the scenario in force, as it was set.
func (p *Proxy) Scenario() ProxyScenario {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sc
}

// SetScenario switches the proxy to sc from its next request on; sc.After
// counts from here. Switching to a scenario that refuses at once stops the
// listener; switching a refusing proxy to anything else listens again on
// the same port, and the error says if that port could not be had back
// (the proxy then keeps refusing). The request log is kept (Reset clears
// it). An invalid sc is refused and the old one stays.
func (p *Proxy) SetScenario(sc ProxyScenario) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrProxyClosed
	}
	p.sc, p.seen = sc, 0
	return p.applyLocked()
}

// SetMode switches the proxy to mode m at once: SetScenario with
// ProxyScenario{Mode: m}.
func (p *Proxy) SetMode(m ProxyMode) error {
	return p.SetScenario(ProxyScenario{Mode: m})
}

// Reset clears the request log and restarts the scenario in force, as if
// it had just been set.
func (p *Proxy) Reset() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrProxyClosed
	}
	p.log.reset()
	p.seen = 0
	return p.applyLocked()
}

// Close stops the proxy: it stops listening, closes every client
// connection, ends waits and forwards under way, and returns when no
// request is being handled and its serving goroutines have ended, having
// closed its idle connections to the targets (net/http's goroutines for
// them end on their own just after). Close is safe to call more than once.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.hold.release()
		p.hold = nil
		p.mu.Unlock()
		p.stop()
		if err := p.srv.Close(); !errors.Is(err, net.ErrClosed) {
			p.closeErr = err // a listener refusal closed already is no error
		}
		p.handlers.Wait()
		p.serving.Wait()
		p.fwd.CloseIdleConnections()
	})
	return p.closeErr
}

// decision is what the proxy does with one request.
type decision struct {
	mode  ProxyMode
	delay time.Duration
	index int // in the log, for the status
	seq   int
}

// decide counts the request, lets the scenario pick what to do with it and
// logs it, all in one critical section so that log order is decision
// order. A Refuse scenario whose After-th request this is stops listening
// here.
func (p *Proxy) decide(r *http.Request) decision {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen++
	d := decision{mode: p.sc.Mode}
	if p.seen <= p.sc.After {
		d.mode = ProxyHealthy
	}
	if p.user != "" && r.Header.Get("Proxy-Authorization") != p.user {
		d.mode = ProxyAuth407
	}
	if d.mode == ProxyLatency {
		d.delay = p.sc.delay()
	}
	h := ProxyHit{Time: now, Host: r.URL.Host, Path: r.URL.Path, Mode: d.mode, Latency: d.delay}
	d.index = p.log.add(h)
	d.seq = p.log.hits[d.index].Seq
	if p.sc.Mode == ProxyRefuse && p.seen >= p.sc.After {
		p.refuseLocked()
	}
	return d
}

// sending records that hit d is being sent on to its target.
func (p *Proxy) sending(d decision) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log.forward(d.index, d.seq)
}

// answered records the status hit d is answered with, before the answer
// is written, so that a client that has read it finds it in the log.
func (p *Proxy) answered(d decision, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log.setStatus(d.index, d.seq, status)
}

// serve handles one request to the proxy.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		http.Error(w, "testserver proxy: CONNECT (https targets) is not implemented; only plain http is forwarded", http.StatusNotImplemented)
		return
	}
	if !r.URL.IsAbs() {
		if p.admin && strings.HasPrefix(r.URL.Path, adminPrefix) {
			serveAdmin(w, r, p, "ProxyAdminHelp")
			return
		}
		http.Error(w, "testserver proxy: a proxy takes requests in absolute form (GET http://host/path)", http.StatusBadRequest)
		return
	}
	if r.URL.Scheme != "http" {
		http.Error(w, "testserver proxy: only plain http is forwarded", http.StatusNotImplemented)
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		abort(w)
		return
	}
	p.handlers.Add(1)
	p.mu.Unlock()
	defer p.handlers.Done()

	d := p.decide(r)
	switch d.mode {
	case ProxyRefuse:
		// Refusal began while this request was on its way on an open
		// connection: cut it as a dead proxy would.
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				resetClose(c)
			}
		}
	case ProxyAuth407:
		w.Header().Set("Proxy-Authenticate", `Basic realm="testserver"`)
		p.answered(d, http.StatusProxyAuthRequired)
		http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
	case ProxyBadGateway:
		p.answered(d, http.StatusBadGateway)
		http.Error(w, "bad gateway", http.StatusBadGateway)
	case ProxyBlock403:
		p.answered(d, http.StatusForbidden)
		body := BlockPage()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusForbidden)
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	default: // ProxyHealthy, ProxyLatency
		p.forward(w, r, d)
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
