package breaker_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/gocolly/colly/v2"
)

// TestClientKeepsItsContextPathThroughTheBreaker: net/http's Client with a
// Timeout (Colly's, 10 s by default) cancels a request through its context
// when its transport is one it knows honours contexts; any other transport
// gets the legacy path, a goroutine and a timer of the client's and a
// goroutine of net/http's transport for every request. The breaker's
// transport over net/http's own must keep the context path.
func TestClientKeepsItsContextPathThroughTheBreaker(t *testing.T) {
	entered, release := make(chan struct{}, 4), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		w.Write([]byte("<html></html>"))
	}))
	defer srv.Close()
	defer close(release)
	legacy := func(t *testing.T) {
		t.Helper()
		<-entered
		var buf bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&buf, 2)
		for _, f := range []string{"net/http.setRequestCancel", "net/http.awaitLegacyCancel"} {
			if strings.Contains(buf.String(), f) {
				t.Errorf("a request in flight has a goroutine in %s: the client took its legacy cancellation path", f)
			}
		}
		release <- struct{}{}
	}

	t.Run("Wrap", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
		cl := &http.Client{Timeout: 5 * time.Second, Transport: b.Wrap(&http.Transport{})}
		done := make(chan error, 1)
		go func() {
			resp, err := cl.Get(srv.URL)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			done <- err
		}()
		legacy(t)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Register", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
		c := colly.NewCollector() // Colly's own client: a 10 s Timeout over net/http's transport
		b.Register(c)
		done := make(chan error, 1)
		go func() { done <- c.Visit(srv.URL) }()
		legacy(t)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkClientPath is one request through an http.Client with a
// Timeout to a loopback server, over net/http's transport alone and over
// the breaker's transport wrapping it (a host the breaker has not gated:
// the transport only passes the request on), so the difference is what
// the client does for a transport it does or does not trust with
// contexts. Allocations are the robust figure; the time includes the
// loopback round trip.
//
//	go test -run '^$' -bench ClientPath -benchmem ./extensions/breaker/
func BenchmarkClientPath(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		rt   func(*http.Transport) http.RoundTripper
	}{
		{"net/http", func(t *http.Transport) http.RoundTripper { return t }},
		{"breakwater/transport", func(t *http.Transport) http.RoundTripper {
			br, _ := breaker.New(breaker.Config{Profile: breaker.Standard()})
			return br.Wrap(t)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			t := &http.Transport{}
			defer t.CloseIdleConnections()
			cl := &http.Client{Timeout: 10 * time.Second, Transport: tc.rt(t)}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := cl.Get(srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
