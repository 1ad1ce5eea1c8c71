package proxy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// ErrAllEjected is wrapped by the error ProxyFunc returns when every
// proxy is ejected: the request fails visibly instead of leaving without
// a proxy. The error says when the first proxy may be probed again.
var ErrAllEjected = errors.New("proxy: every proxy is ejected")

// ErrClientSide is wrapped by ClientSide's error: more of the pool is
// failing than MaxEjectedShare lets the Pool eject, so the cause is
// likely on the client's side (its network, its credentials, its host),
// not in the proxies. The pool pauses on it (see Config.MaxEjectedShare).
var ErrClientSide = errors.New("proxy: more proxies failing than may be ejected: the client side is the likely cause")

// ClientSide returns nil while the pool's failures are the proxies' own,
// and an error wrapping ErrClientSide, naming the failing proxies, while a
// proxy's circuit has tripped with MaxEjectedShare of the pool already
// ejected (until a request through it is carried), or while every proxy is
// ejected.
func (p *Pool) ClientSide() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clientSideLocked()
}

func (p *Pool) clientSideLocked() error {
	var ejected, held []string
	for _, m := range p.members {
		switch {
		case m.state != circuit.Closed:
			ejected = append(ejected, m.name)
		case m.held:
			held = append(held, m.name)
		}
	}
	n := len(p.members)
	switch {
	case len(held) > 0:
		return fmt.Errorf("%w: %d of %d proxies are failing (ejected: %s; failing but kept in the rotation: %s) and at most %d may be ejected at once: check the crawler's network, credentials and host before the proxies",
			ErrClientSide, len(ejected)+len(held), n, list(ejected), list(held), p.most)
	case len(ejected) == n:
		return fmt.Errorf("%w: every proxy of %d is ejected (%s): check the crawler's network, credentials and host before the proxies",
			ErrClientSide, n, list(ejected))
	}
	return nil
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
