package testserver

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
)

// How long a proxy that stops refusing tries to have its port back, and
// how often.
const (
	relistenTries = 50
	relistenPause = 20 * time.Millisecond
)

// Refusal is real: while a proxy refuses, nothing listens on its port, so
// the kernel answers a client's SYN with a reset and the client's dial
// fails with ECONNREFUSED ("connection refused"), as with a proxy that is
// down. The port stays the proxy's: while it refuses, a socket bound to
// it and not listening holds it (portHold), so no store or proxy started
// meanwhile is given it (where that hold is not at hand, the proxy cannot
// listen again if another socket took the port, and says so).

// applyLocked makes the listener agree with the scenario: a Refuse
// scenario whose After is already reached refuses; any other listens.
func (p *Proxy) applyLocked() error {
	if p.sc.Mode == ProxyRefuse && p.seen >= p.sc.After {
		p.refuseLocked()
		return nil
	}
	return p.listenLocked()
}

// refuseLocked stops listening and resets every idle client connection
// and every one accepted but not yet read from; connections busy with a
// request are reset when it is answered (connState). A reset, not an
// orderly close: a client that has just sent a request on a fresh
// connection then reads "connection reset", as from a dead proxy, where an
// orderly close would give it a bare EOF; on a reused connection Go's
// transport retries a GET either way, and its new dial is refused.
func (p *Proxy) refuseLocked() {
	if p.ln == nil {
		return
	}
	_ = p.ln.Close()
	p.ln = nil
	p.hold = holdPort(p.addr)
	for c, st := range p.conns {
		if st == http.StateIdle || st == http.StateNew {
			resetClose(c)
		}
	}
}

// listenLocked listens again on the proxy's port if it is refusing.
func (p *Proxy) listenLocked() error {
	if p.ln != nil || p.closed {
		return nil
	}
	p.hold.release()
	p.hold = nil
	var err error
	for range relistenTries {
		var ln net.Listener
		ln, err = net.Listen("tcp", p.addr)
		if err == nil {
			p.serveLocked(ln)
			return nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
		time.Sleep(relistenPause)
	}
	return fmt.Errorf("testserver: proxy %s: listen again after refusing: %w", p.addr, err)
}

// serveLocked serves ln until it is closed (refusal) or the proxy is.
func (p *Proxy) serveLocked(ln net.Listener) {
	p.ln = ln
	p.serving.Add(1)
	go func() {
		defer p.serving.Done()
		_ = p.srv.Serve(ln) // returns when ln is closed, by refusal or Close
	}()
}

// connState is the server's ConnState hook: it tracks client connections
// so that refusal can close them, and closes one that falls idle while the
// proxy refuses.
func (p *Proxy) connState(c net.Conn, st http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(p.conns, c)
		return
	}
	p.conns[c] = st
	if p.ln == nil && (st == http.StateIdle || st == http.StateNew) {
		resetClose(c)
	}
}
