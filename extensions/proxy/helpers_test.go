package proxy_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
)

var t0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// fwd is a tiny forward proxy for plain-http targets: it forwards each
// request (or answers Status itself, when set) and counts them.
type fwd struct {
	*httptest.Server
	status atomic.Int32 // 0: forward
	header http.Header  // set on its own answers
	mu     sync.Mutex
	paths  []string
}

func startFwd(t *testing.T) *fwd {
	t.Helper()
	f := &fwd{}
	tr := &http.Transport{DisableKeepAlives: true}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.paths = append(f.paths, r.URL.Path)
		f.mu.Unlock()
		if s := int(f.status.Load()); s != 0 {
			for k, v := range f.header {
				w.Header()[k] = v
			}
			http.Error(w, "fwd", s)
			return
		}
		out := r.Clone(r.Context())
		out.RequestURI = ""
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fwd) hits() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

// refusing returns the URL of a proxy address that refuses connections.
func refusing(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// origin is a healthy site answering 200 with its path.
func origin(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html><body>"+r.URL.Path+"</body></html>")
	}))
	t.Cleanup(s.Close)
	return s
}

// exact is a Config without jitter on a fake clock.
func exact(clk *clocktest.Fake, proxies ...string) proxy.Config {
	return proxy.Config{Proxies: proxies, Jitter: -1, Clock: clk}
}

func mustPool(t *testing.T, cfg proxy.Config) *proxy.Pool {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// New is proxy.New, named for the helpers.
var New = proxy.New

// next asks the rotation for one proxy, as a transport would.
func next(t *testing.T, p *proxy.Pool) (string, error) {
	t.Helper()
	r, _ := http.NewRequest("GET", "http://site.test/", nil)
	u, err := p.ProxyFunc()(r)
	if err != nil {
		return "", err
	}
	return proxy.Name(u), nil
}

// fail records n failures of kind o for proxy.
func fail(t *testing.T, p *proxy.Pool, name string, n int, o proxy.Outcome) {
	t.Helper()
	for range n {
		if err := p.RecordOutcome(name, o, time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
}

func state(p *proxy.Pool, name string) proxy.Snapshot {
	for _, s := range p.Stats() {
		if s.Name == name {
			return s
		}
	}
	return proxy.Snapshot{}
}
