package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/proxy"
)

// via fetches target through proxyURL and returns what Colly's callbacks
// would see: the error (with no answer) and the status and header.
func via(t *testing.T, proxyURL, target string) (error, int, http.Header) {
	t.Helper()
	pu, err := url.Parse(proxyURL)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}}
	resp, err := c.Get(target)
	if err != nil {
		return err, 0, nil
	}
	resp.Body.Close()
	return nil, resp.StatusCode, resp.Header
}

// connectAnswering is a proxy answering every CONNECT with status.
func connectAnswering(t *testing.T, status int) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Proxy-Authenticate", `Basic realm="t"`)
		w.WriteHeader(status)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// socksRefusingCredentials is a SOCKS5 proxy that asks for a user name
// and password and refuses them.
func socksRefusingCredentials(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				hdr := make([]byte, 2)
				if _, err := io.ReadFull(r, hdr); err != nil {
					return
				}
				io.CopyN(io.Discard, r, int64(hdr[1]))
				c.Write([]byte{5, 2}) // username/password, please
				r.ReadByte()          // the subnegotiation's version
				ulen, _ := r.ReadByte()
				io.CopyN(io.Discard, r, int64(ulen))
				plen, _ := r.ReadByte()
				io.CopyN(io.Discard, r, int64(plen))
				c.Write([]byte{1, 1}) // refused
			}()
		}
	}()
	return "socks5://user:wrong@" + ln.Addr().String()
}

func TestClassifyRealTransportErrors(t *testing.T) {
	site := origin(t)
	plain := startFwd(t) // answers in plain http; a TLS client fails its handshake
	for _, tc := range []struct {
		name, proxy, target string
		want                proxy.Outcome
	}{
		{"refused, http target", refusing(t), site.URL + "/a", proxy.ConnectFailed},
		{"refused, https target", refusing(t), "https://site.test/a", proxy.ConnectFailed},
		{"TLS handshake with an https proxy", "https://" + plain.Listener.Addr().String(), site.URL + "/a", proxy.ConnectFailed},
		{"CONNECT answered 407", connectAnswering(t, http.StatusProxyAuthRequired), "https://site.test/a", proxy.AuthFailed},
		{"CONNECT answered 502", connectAnswering(t, http.StatusBadGateway), "https://site.test/a", proxy.NotJudged},
		{"SOCKS5 credentials refused", socksRefusingCredentials(t), site.URL + "/a", proxy.AuthFailed},
		{"carried", plain.URL, site.URL + "/a", proxy.Carried},
	} {
		err, status, h := via(t, tc.proxy, tc.target)
		if got := proxy.Classify(err, status, h); got != tc.want {
			t.Errorf("%s: Classify(%v, %d) = %v, want %v", tc.name, err, status, got, tc.want)
		}
	}
}

func TestClassifyAnswersByStatusAndProxyStatus(t *testing.T) {
	ps := func(v ...string) http.Header { return http.Header{"Proxy-Status": v} }
	colly := func(status int) error { return errors.New(http.StatusText(status)) } // what Colly's OnError gets
	for _, tc := range []struct {
		name   string
		status int
		h      http.Header
		want   proxy.Outcome
	}{
		{"407 answered to a plain-http request", 407, nil, proxy.AuthFailed},
		{"502 without a mark: the site's or the proxy's", 502, nil, proxy.NotJudged},
		{"503 without a mark", 503, nil, proxy.NotJudged},
		{"504 without a mark", 504, nil, proxy.NotJudged},
		{"502 the proxy says is its own", 502, ps("fwd.test; error=proxy_internal_error"), proxy.ProxyError},
		{"503 over the proxy's connection limit", 503, ps(`fwd.test; error=connection_limit_reached; details="too many, sorry"`), proxy.ProxyError},
		{"403 the proxy's policy denied", 403, ps("fwd.test; error=http_request_denied"), proxy.ProxyError},
		{"502 the proxy says the site refused", 502, ps("fwd.test; error=connection_refused"), proxy.NotJudged},
		{"an inner proxy's error relayed by ours", 502, ps("inner.test; error=proxy_internal_error", "fwd.test; received-status=502"), proxy.NotJudged},
		{"a comma in quoted details", 502, ps(`fwd.test; details="a, b"; error=proxy_internal_error`), proxy.ProxyError},
		{"the site's 500", 500, nil, proxy.Carried},
		{"the site's 403", 403, nil, proxy.Carried},
		{"the site's 404", 404, nil, proxy.Carried},
		{"a 200 with a Proxy-Status error", 200, ps("fwd.test; error=proxy_internal_error"), proxy.Carried},
	} {
		if got := proxy.Classify(colly(tc.status), tc.status, tc.h); got != tc.want {
			t.Errorf("%s: Classify(%d, %v) = %v, want %v", tc.name, tc.status, tc.h, got, tc.want)
		}
	}
	for _, tc := range []struct {
		err  error
		want proxy.Outcome
	}{
		{nil, proxy.Carried},
		{context.Canceled, proxy.NotJudged},
		{&url.Error{Op: "Get", URL: "http://site.test/", Err: fmt.Errorf("%w: soon", proxy.ErrAllEjected)}, proxy.NotJudged},
		{io.ErrUnexpectedEOF, proxy.NotJudged},
	} {
		if got := proxy.Classify(tc.err, 0, nil); got != tc.want {
			t.Errorf("Classify(%v, 0) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
