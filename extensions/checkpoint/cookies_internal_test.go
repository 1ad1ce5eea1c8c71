package checkpoint

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/gocolly/colly/v2"
)

// cookieSite answers every host from memory: /login sets a session
// cookie, every other path is a page; it records the Cookie header each
// host's requests carried.
type cookieSite struct {
	mu   sync.Mutex
	sent map[string]string // host + path → Cookie header
}

func (s *cookieSite) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.sent[r.URL.Host+r.URL.Path] = r.Header.Get("Cookie")
	s.mu.Unlock()
	h := http.Header{"Content-Type": {"text/html"}}
	if r.URL.Path == "/login" {
		h.Set("Set-Cookie", "session=s-"+r.URL.Host+"; Path=/")
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader("<html><body>ok</body></html>")), Request: r}, nil
}

// TestCookieCacheIsBoundedAndForgetsNothing: a broad crawl's hosts, most
// with no cookie, do not each keep an entry in the checkpoint's cookie
// cache; a host whose entry was evicted still sends the cookie it was
// given, read back from the store.
func TestCookieCacheIsBoundedAndForgetsNothing(t *testing.T) {
	const hosts = 500
	cp, err := New(memory.New(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	for i := range cp.cookies {
		cp.cookies[i].m.Size = 16 / cookieShards
	}
	site := &cookieSite{sent: map[string]string{}}
	c := colly.NewCollector()
	c.WithTransport(site)
	cp.Register(c)
	visit := func(u string) {
		t.Helper()
		if err := c.Visit(u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	visit("http://login.test/login")
	for i := range hosts {
		visit(fmt.Sprintf("http://shop-%d.test/p", i))
	}
	visit("http://login.test/account")
	if got, want := site.sent["login.test/account"], "session=s-login.test"; got != want {
		t.Errorf("after %d other hosts the login host sent Cookie %q, want %q", hosts, got, want)
	}
	if got := site.sent["shop-7.test/p"]; got != "" {
		t.Errorf("a host never given a cookie sent Cookie %q", got)
	}
	n := 0
	for i := range cp.cookies {
		cp.cookies[i].mu.Lock()
		n += cp.cookies[i].m.Len()
		cp.cookies[i].mu.Unlock()
	}
	if n > 2*16 {
		t.Fatalf("the cookie cache holds %d hosts after %d, want at most %d", n, hosts+1, 2*16)
	}
}
