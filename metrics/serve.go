package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where Serve answers.
const Path = "/metrics"

// ShutdownTimeout bounds how long a stopping Server waits for scrapes in
// progress.
const ShutdownTimeout = 5 * time.Second

// Server is a running metrics endpoint, from Serve.
type Server struct {
	srv  *http.Server
	addr string
	done chan struct{}
	once sync.Once
	err  error // set before done closes
}

// Serve listens on addr (":9090" is every interface; "127.0.0.1:9090"
// keeps the crawl's numbers local; port 0 picks a free one) and serves g
// at Path in the background until ctx is done or Close is called. A port
// in use is an error here, not later.
func Serve(ctx context.Context, addr string, g prometheus.Gatherer) (*Server, error) {
	if g == nil {
		return nil, errors.New("metrics: Serve needs a prometheus.Gatherer (the *prometheus.Registry given to New)")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %q for /metrics: %w", addr, err)
	}
	mux := http.NewServeMux()
	// A metric that cannot be gathered is left out and the rest are
	// served: one unreadable source never blanks the page.
	mux.Handle(Path, promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	s := &Server{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		addr: ln.Addr().String(),
		done: make(chan struct{}),
	}
	served := make(chan error, 1)
	go func() { served <- s.srv.Serve(ln) }()
	go func() {
		select {
		case <-ctx.Done():
			s.stop()
		case err := <-served:
			// Serve ends on its own only when the listener fails.
			s.finish(err)
			return
		}
		<-served
	}()
	return s, nil
}

// URL returns the metrics page's address, http://<addr>/metrics, with the
// port chosen when Serve's addr asked for port 0.
func (s *Server) URL() string { return "http://" + s.addr + Path }

// Close stops the server: no new connections, scrapes in progress get up
// to ShutdownTimeout. It returns the error the server stopped with, nil on a clean stop.
func (s *Server) Close() error {
	s.stop()
	<-s.done
	return s.err
}

func (s *Server) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	s.finish(err)
}

func (s *Server) finish(err error) {
	s.once.Do(func() {
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		if err != nil {
			err = fmt.Errorf("metrics: serve /metrics on %s: %w", s.addr, err)
		}
		s.err = err
		close(s.done)
	})
}
