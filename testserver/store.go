package testserver

import (
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

// ErrNotLoopback is returned by Start for a listen address that is not on
// the loopback interface when Config.AllowRemote is not set.
var ErrNotLoopback = errors.New("testserver: listen address is not loopback")

// Config configures a Store. The zero Config is a healthy store of
// DefaultProducts products on a free port of 127.0.0.1.
type Config struct {
	// Addr is the listen address; "" means "127.0.0.1:0", a free port on
	// loopback, so every store has a host of its own.
	Addr string

	// AllowRemote permits an Addr that is not loopback. Without it Start
	// refuses one with ErrNotLoopback: a store that fails on command is not
	// something to expose to a network.
	AllowRemote bool

	// Products is the number of products (0 = DefaultProducts, NoProducts =
	// none); PerPage the products per listing page (≤ 0 = DefaultPerPage).
	Products int
	PerPage  int

	// Scenario is the behaviour from the first request; see SetScenario.
	Scenario Scenario

	// Now is the clock for everything the store decides by time: hit times,
	// Scenario.RecoverAfter, RateLimit's refill. nil means time.Now. Real
	// waits (latency, hangs) use real timers regardless.
	Now func() time.Time

	// Admin serves the admin endpoints under /_admin/ (see the package
	// documentation). Admin requests are not counted as hits.
	Admin bool
}

// Store is one test web shop on its own listener. It is safe for concurrent
// use; Close it when done.
type Store struct {
	cat   Catalog
	now   func() time.Time
	admin bool

	srv  *http.Server
	url  string
	done chan struct{} // closed by Close: ends every wait and hang

	closeOnce sync.Once
	closeErr  error
	handlers  sync.WaitGroup // requests inside ServeHTTP

	mu     sync.Mutex
	closed bool
	conns  int      // connections accepted, for Hit.Conn
	sc     Scenario // as set, for Scenario()
	prog   progress
	log    hitLog
}

// Start listens on cfg.Addr and serves the store until Close.
func Start(cfg Config) (*Store, error) {
	if err := cfg.Scenario.Validate(); err != nil {
		return nil, err
	}
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if !cfg.AllowRemote {
		if err := checkLoopback(addr); err != nil {
			return nil, err
		}
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("testserver: listen on %s: %w", addr, err)
	}
	s := &Store{
		cat:   Catalog{Products: cfg.Products, PerPage: cfg.PerPage},
		now:   now,
		admin: cfg.Admin,
		url:   "http://" + ln.Addr().String(),
		done:  make(chan struct{}),
		sc:    cfg.Scenario,
	}
	s.prog.start(cfg.Scenario, now())
	s.log.reset()
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // the store never logs on its own
		ConnContext:       s.connContext,
	}
	go s.srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed after Close
	return s, nil
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("testserver: listen address %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %q; use 127.0.0.1, or set AllowRemote (-allow-remote) to listen beyond this machine",
		ErrNotLoopback, addr)
}

// URL returns the store's base URL, "http://127.0.0.1:PORT", with no
// trailing slash. The first listing page is URL()+"/".
func (s *Store) URL() string { return s.url }

// Host returns the store's host:port, the key a per-domain breaker sees.
func (s *Store) Host() string { return strings.TrimPrefix(s.url, "http://") }

// ProductURL returns the absolute URL of product n.
func (s *Store) ProductURL(n int) string { return s.url + ProductPath(n) }

// ListingURL returns the absolute URL of listing page p.
func (s *Store) ListingURL(p int) string { return s.url + ListingPath(p) }

// Catalog returns the store's catalogue, to render the pages it serves
// without asking it.
func (s *Store) Catalog() Catalog { return s.cat }

// Scenario returns the scenario in force, as it was set.
func (s *Store) Scenario() Scenario {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sc
}

// SetScenario switches the store to sc from its next request on. The
// scenario starts afresh: sc.After counts from here, RecoverAfter waits for
// sc's own first failure, RateLimit's bucket is full. The request log is
// kept (Reset clears it). An invalid sc is refused and the old one stays.
func (s *Store) SetScenario(sc Scenario) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sc = sc
	s.prog.start(sc, now)
	return nil
}

// Reset clears the request log and restarts the scenario in force, as if it
// had just been set.
func (s *Store) Reset() {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log.reset()
	s.prog.start(s.sc, now)
}

// Close stops the store: it stops listening, closes every connection,
// releases hanging requests and waiting ones at once, and returns when no
// request is being handled. Close is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.closeErr = s.srv.Close()
		s.handlers.Wait()
	})
	return s.closeErr
}

// ServeHTTP answers one request according to the scenario. A Store serves
// itself on its own listener; ServeHTTP is exported so that it is an
// http.Handler, not to be mounted elsewhere.
func (s *Store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.admin && strings.HasPrefix(r.URL.Path, adminPrefix) {
		serveAdmin(w, r, s, "AdminHelp")
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		abort(w)
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()

	c, _ := r.Context().Value(connKey{}).(*connInfo)
	p := s.decide(r.URL.Path, c)
	s.respond(w, r, p)
}

// decide routes the request, lets the scenario pick the answer and records
// the hit, all in one critical section so that hit order is decision order.
func (s *Store) decide(path string, c *connInfo) plan {
	pg := s.cat.route(path)
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prog.next(now, pg)
	h := Hit{Time: now, Path: path, Status: p.hitStatus(), Mode: p.mode, Latency: p.latency}
	if c != nil {
		c.served++
		h.Conn, h.ConnSeq = c.id, c.served
	}
	s.log.add(h)
	return p
}
