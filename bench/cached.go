package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// cachedStore serves a healthy testserver catalogue's product pages from
// memory: byte for byte the pages a testserver.Store renders, without
// rendering them again on every request. The overhead scenario crawls
// these, so that the CPU it measures is the clients', not the store's
// template (testserver renders each page per request and logs every hit).
type cachedStore struct {
	pages    [][]byte // pages[n-1] is product n
	srv      *http.Server
	ln       net.Listener
	requests atomic.Int64
	conns    atomic.Int64 // connections accepted
}

func startCachedStore(products int) (*cachedStore, error) {
	cat := testserver.Catalog{Products: products}
	s := &cachedStore{pages: make([][]byte, cat.Len())}
	for i := range s.pages {
		s.pages[i] = cat.ProductPage(i + 1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener was closed under it: nothing to report
		}
	}()
	return s, nil
}

const productPrefix = "/products/sku-"

// serverLabels is the pprof label context of the client being measured,
// which the stores' connection goroutines take on, so that a -cpuprofile
// splits the serving side by client too (the clients run one at a time).
var serverLabels atomic.Pointer[context.Context]

func (s *cachedStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if ctx := serverLabels.Load(); ctx != nil {
		pprof.SetGoroutineLabels(*ctx)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, productPrefix))
	if !strings.HasPrefix(r.URL.Path, productPrefix) || err != nil || n < 1 || n > len(s.pages) {
		http.NotFound(w, r)
		return
	}
	page := s.pages[n-1]
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(page)))
	_, _ = w.Write(page)
}

func (s *cachedStore) Host() string { return s.ln.Addr().String() }

func (s *cachedStore) ProductURL(n int) string {
	return "http://" + s.Host() + testserver.ProductPath(n)
}

// Conns returns the number of connections accepted.
func (s *cachedStore) Conns() int { return int(s.conns.Load()) }

// Count returns the number of requests received.
func (s *cachedStore) Count() int { return int(s.requests.Load()) }

func (s *cachedStore) Close() error { return s.srv.Close() }
