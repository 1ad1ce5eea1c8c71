package collyx

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"
)

// TestCollyVersionIsTheOneThisPackageReads pins the Colly version whose
// unexported layout this package reads and whose behaviour it copies: an
// upgrade must come here first. What is pinned, each against this Colly
// version itself by the tests below: the collector's OnError callbacks and
// lock (ReportError), its OnRequest callbacks and the
// order Colly runs them in (OnlyOwnAfter: own_test.go), its backend's client (Client) and
// LimitRules' slots (LimitSlots: limitslots_test.go), its
// cache layout (CacheFile), the URL scrape sends (ParseURL), the ID
// requestCheck hashes (RequestID, VisitID), the request JSON (SerialRequest,
// MarshalRequest, ParseRequest: requestload_test.go), a request's header
// map and address as its identity (HeaderKey, RequestAddr), a request's
// collector (CollectorOf) and the test for running OnHTML (IsHTML).
func TestCollyVersionIsTheOneThisPackageReads(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "github.com/gocolly/colly/v2" {
			if f[1] != "v2.3.0" {
				t.Fatalf("colly %s: collyx reads v2.3.0's layout and copies its behaviour; check each function of internal/collyx against the new source (colly.go, request.go, http_backend.go), then update this pin", f[1])
			}
			return
		}
	}
	t.Fatal("go.mod requires no github.com/gocolly/colly/v2")
}

func TestErrorCallbacksAreFoundInOrder(t *testing.T) {
	c := colly.NewCollector()
	var got []int
	c.OnError(func(*colly.Response, error) { got = append(got, 1) })
	c.OnError(func(*colly.Response, error) { got = append(got, 2) })
	r := &colly.Request{Ctx: colly.NewContext()}
	want := errors.New("refused")
	var seen []error
	c.OnError(func(resp *colly.Response, err error) {
		if resp.Request != r || resp.Ctx != r.Ctx {
			t.Errorf("the response does not carry the request and its context")
		}
		seen = append(seen, err)
	})
	if !ReportError(c, r, want) {
		t.Fatal("ReportError found no callbacks")
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 2 || len(seen) != 1 || seen[0] != want {
		t.Fatalf("callbacks ran %v and saw %v; want [1 2] and the error once", got, seen)
	}
}

func TestNilCollectorHasNoCallbacks(t *testing.T) {
	if ReportError(nil, &colly.Request{}, errors.New("refused")) {
		t.Fatal("a nil collector reported callbacks")
	}
}

// TestCacheFileIsWhereCollyCaches lets Colly cache a page and finds it
// where CacheFile says, then forgets it.
func TestCacheFileIsWhereCollyCaches(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	dir := t.TempDir()
	c := colly.NewCollector(colly.CacheDir(dir))
	u := srv.URL + "/page?x=1"
	c.Visit(u)
	if _, err := os.Stat(CacheFile(dir, u)); err != nil {
		t.Fatalf("Colly cached the 429 elsewhere: %v", err)
	}
	if err := ForgetCached(dir, u); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(CacheFile(dir, u)); !os.IsNotExist(err) {
		t.Fatalf("still cached: %v", err)
	}
	if err := ForgetCached(dir, u); err != nil {
		t.Fatalf("forgetting what is not cached: %v", err)
	}
}

// TestClientIsTheOneCollySendsWith: the client Client reads is the one a
// transport set through Colly's API is installed on, and a clone shares it.
func TestClientIsTheOneCollySendsWith(t *testing.T) {
	c := colly.NewCollector()
	rt := &http.Transport{}
	c.WithTransport(rt)
	cl, err := Client(c)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Transport != rt {
		t.Fatalf("Client's transport is %T, not the one WithTransport set", cl.Transport)
	}
	if cc, err := Client(c.Clone()); err != nil || cc != cl {
		t.Fatalf("a clone's client: %p, %v; want the collector's %p", cc, err, cl)
	}
	if _, err := Client(nil); err == nil {
		t.Fatal("a nil collector has a client")
	}
}

// stubTransport answers every request with status 200 and body, whatever
// its host, and remembers what it was sent.
type stubTransport struct {
	mu      sync.Mutex
	ctype   string
	body    string
	urls    []string
	headers []HeaderKey
}

func (t *stubTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.urls = append(t.urls, req.URL.String())
	t.headers = append(t.headers, HeaderOf(req.Header))
	ctype, body := t.ctype, t.body
	t.mu.Unlock()
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	h := http.Header{}
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// idProbe is a colly storage.Storage that remembers the IDs Colly asks
// about.
type idProbe struct {
	mu  sync.Mutex
	ids []uint64
}

func (p *idProbe) Init() error { return nil }
func (p *idProbe) Visited(uint64) error {
	return nil
}
func (p *idProbe) Cookies(*url.URL) string     { return "" }
func (p *idProbe) SetCookies(*url.URL, string) {}
func (p *idProbe) IsVisited(id uint64) (bool, error) {
	p.mu.Lock()
	p.ids = append(p.ids, id)
	p.mu.Unlock()
	return false, nil
}

func stubCollector(t *testing.T, tr *stubTransport) (*colly.Collector, *idProbe) {
	t.Helper()
	c := colly.NewCollector(colly.IgnoreRobotsTxt())
	c.WithTransport(tr)
	p := &idProbe{}
	if err := c.SetStorage(p); err != nil {
		t.Fatal(err)
	}
	return c, p
}

var collyURLs = []string{
	"http://127.0.0.1:8080/p/1", "HTTP://Shop.Example/a/./b/../c?q=1#frag", "http://bücher.example/", "http://0x7f.0.0.1:80/x",
	"http://2130706433/", "https://h:443/x", "http://[0:0::1]:8080/a b", "http://example.com", "http://example.com/%7e/ä?x=|",
}

// TestParseURLIsTheURLCollySends: the URL a Request holds and the one the
// transport is sent are ParseURL's.
func TestParseURLIsTheURLCollySends(t *testing.T) {
	tr := &stubTransport{}
	c, _ := stubCollector(t, tr)
	var seen []string
	c.OnRequest(func(r *colly.Request) { seen = append(seen, r.URL.String()) })
	for i, raw := range collyURLs {
		if err := c.Visit(raw); err != nil {
			t.Fatalf("Visit(%q): %v", raw, err)
		}
		u, err := ParseURL(raw)
		if err != nil {
			t.Fatalf("ParseURL(%q): %v", raw, err)
		}
		if seen[i] != u.String() || tr.urls[i] != u.String() {
			t.Errorf("Visit(%q): the request holds %q and the transport got %q; ParseURL gives %q", raw, seen[i], tr.urls[i], u)
		}
	}
}

// TestRequestIDIsWhatCollyAsksItsStorage: VisitID of the URL given to
// Visit or Post, and RequestID of the request's URL, are the ID Colly
// hands its storage.
func TestRequestIDIsWhatCollyAsksItsStorage(t *testing.T) {
	tr := &stubTransport{}
	c, p := stubCollector(t, tr)
	var fromReq []uint64
	c.OnRequest(func(r *colly.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body.(io.Seeker).Seek(0, io.SeekStart)
		}
		fromReq = append(fromReq, RequestID(r.URL.String(), body))
	})
	var want []uint64
	for _, raw := range collyURLs {
		if err := c.Visit(raw); err != nil {
			t.Fatal(err)
		}
		want = append(want, VisitID(raw, nil))
	}
	if err := c.PostRaw(collyURLs[0]+"/cart", []byte("qty=1&sku=42")); err != nil {
		t.Fatal(err)
	}
	want = append(want, VisitID(collyURLs[0]+"/cart", []byte("qty=1&sku=42")))
	if len(p.ids) != len(want) {
		t.Fatalf("Colly asked its storage %d times, want %d", len(p.ids), len(want))
	}
	for i := range want {
		if p.ids[i] != want[i] || fromReq[i] != want[i] {
			t.Errorf("request %d: Colly's ID %016x, VisitID %016x, RequestID of the request %016x", i, p.ids[i], want[i], fromReq[i])
		}
	}
}

// TestMarshalRequestWritesWhatCollyWrites: byte for byte Colly's own
// (*Request).Marshal, whose JSON UnmarshalRequest reads back; but for a
// request with no Ctx, which Marshal writes as {} and MarshalRequest as
// null (UnmarshalRequest gives both an empty Ctx).
func TestMarshalRequestWritesWhatCollyWrites(t *testing.T) {
	u, _ := url.Parse("https://shop.example.test/p?q=<a>&b=\u2028")
	h := http.Header{"Accept": {"*/*"}, "X-Empty": nil}
	for _, ctx := range []map[string]any{nil, {}, {"s": "x", "b": true, "n": nil}, {"f": 1.5}} {
		r := &colly.Request{URL: u, Method: "POST", Depth: 3, ID: 9, Host: "h", Headers: &h, Body: bytes.NewReader([]byte("q=1"))}
		if ctx != nil {
			r.Ctx = colly.NewContext()
			for k, v := range ctx {
				r.Ctx.Put(k, v)
			}
		}
		want, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got, dropped, err := MarshalRequest(r, r.URL.String(), []byte("q=1"))
		if ctx == nil {
			want = bytes.Replace(want, []byte(`"Ctx":{}`), []byte(`"Ctx":null`), 1)
		}
		if err != nil || len(dropped) != 0 || !bytes.Equal(got, want) {
			t.Fatalf("MarshalRequest = %s, %v, %v; Colly's Marshal writes %s", got, dropped, err, want)
		}
		back, err := colly.NewCollector().UnmarshalRequest(got)
		if err != nil || back.URL.String() != u.String() || back.Method != "POST" || back.Depth != 3 { // (UnmarshalRequest does not restore Host)
			t.Fatalf("UnmarshalRequest(%s) = %+v, %v", got, back, err)
		}
	}
}

// TestHeaderKeyIsTheMapTheTransportGets: a request's Headers, as every
// callback sees it, is the map its http.Request carries to the transport,
// and Retry sends that same map again.
func TestHeaderKeyIsTheMapTheTransportGets(t *testing.T) {
	tr := &stubTransport{body: "<html></html>", ctype: "text/html"}
	c, _ := stubCollector(t, tr)
	var keys []HeaderKey
	c.OnRequest(func(r *colly.Request) { keys = append(keys, RequestHeader(r)) })
	retried := false
	c.OnResponse(func(r *colly.Response) {
		if k := RequestHeader(r.Request); k != keys[len(keys)-1] {
			t.Errorf("OnResponse sees another header map than OnRequest")
		}
		if !retried {
			retried = true
			if err := r.Request.Retry(); err != nil {
				t.Fatal(err)
			}
		}
	})
	if err := c.Visit("http://shop.test/p"); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || len(tr.headers) != 2 {
		t.Fatalf("%d requests, %d sent; want 2 and 2", len(keys), len(tr.headers))
	}
	for i := range keys {
		if keys[i] == (HeaderKey{}) || keys[i] != tr.headers[i] {
			t.Errorf("request %d: the callbacks' header map is not the one the transport got", i)
		}
	}
	if keys[0] != keys[1] {
		t.Error("Retry sent another header map")
	}
	if HeaderOf(nil) != (HeaderKey{}) || RequestHeader(&colly.Request{}) != (HeaderKey{}) {
		t.Error("no header map has a key")
	}
}

// TestRequestAddrNamesOneFetch: every callback of one fetch gets the same
// *Request, and another fetch another one.
func TestRequestAddrNamesOneFetch(t *testing.T) {
	tr := &stubTransport{body: "<html><p>x</p></html>", ctype: "text/html"}
	c, _ := stubCollector(t, tr)
	byURL := map[string]map[uintptr]bool{}
	var keep []*colly.Request // alive, so that no two share an address
	note := func(r *colly.Request) {
		if byURL[r.URL.Path] == nil {
			byURL[r.URL.Path] = map[uintptr]bool{}
			keep = append(keep, r)
		}
		byURL[r.URL.Path][RequestAddr(r)] = true
	}
	c.OnRequest(note)
	c.OnResponse(func(r *colly.Response) { note(r.Request) })
	c.OnHTML("p", func(e *colly.HTMLElement) { note(e.Request) })
	c.OnScraped(func(r *colly.Response) { note(r.Request) })
	for _, u := range []string{"http://shop.test/a", "http://shop.test/b"} {
		if err := c.Visit(u); err != nil {
			t.Fatal(err)
		}
	}
	if len(byURL["/a"]) != 1 || len(byURL["/b"]) != 1 {
		t.Fatalf("addresses per fetch: %v; want one each", byURL)
	}
	for a := range byURL["/a"] {
		if byURL["/b"][a] {
			t.Fatal("two fetches share a request")
		}
	}
	_ = keep
}

// TestCollectorOfIsTheCollectorWhoseCallbacksRun: a request, in every
// callback of its fetch, is the collector's that made it (a clone's, when
// the clone made it; the unmarshalling collector's for a loaded one).
func TestCollectorOfIsTheCollectorWhoseCallbacksRun(t *testing.T) {
	tr := &stubTransport{body: "<html><p>x</p></html>", ctype: "text/html"}
	c, _ := stubCollector(t, tr)
	dc := c.Clone()
	got := map[string][]*colly.Collector{}
	for _, x := range []*colly.Collector{c, dc} {
		x.OnRequest(func(r *colly.Request) { got[r.URL.Path] = append(got[r.URL.Path], x, CollectorOf(r)) })
		x.OnHTML("p", func(e *colly.HTMLElement) {
			got[e.Request.URL.Path] = append(got[e.Request.URL.Path], x, CollectorOf(e.Request))
		})
	}
	if err := c.Visit("http://shop.test/a"); err != nil {
		t.Fatal(err)
	}
	if err := dc.Visit("http://shop.test/b"); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]*colly.Collector{"/a": c, "/b": dc} {
		if len(got[path]) != 4 {
			t.Fatalf("%s: %d callbacks noted, want 2", path, len(got[path])/2)
		}
		for i := 0; i < len(got[path]); i += 2 {
			if got[path][i] != want || got[path][i+1] != want {
				t.Errorf("%s: CollectorOf in a callback of %p is %p; want %p, the collector that made it", path, got[path][i], got[path][i+1], want)
			}
		}
	}
	r, err := dc.UnmarshalRequest([]byte(`{"URL":"http://shop.test/c","Method":"GET"}`))
	if err != nil {
		t.Fatal(err)
	}
	if CollectorOf(r) != dc {
		t.Error("a request UnmarshalRequest made is not that collector's")
	}
	if CollectorOf(&colly.Request{}) != nil || CollectorOf(nil) != nil {
		t.Error("a request no collector made has a collector")
	}
}

// TestIsHTMLIsWhenCollyRunsOnHTML: IsHTML says yes exactly for the
// responses Colly runs its OnHTML callbacks on.
func TestIsHTMLIsWhenCollyRunsOnHTML(t *testing.T) {
	cases := []struct{ ctype, body string }{
		{"text/html; charset=utf-8", "x"}, {"TEXT/HTML", ""}, {" application/xhtml+xml ;q=1", "x"}, {"text/plain", "<html></html>"},
		{"", "<!DOCTYPE html><html></html>"}, {"", "plain text"}, {"application/json", "{}"}, {"text/htmlx", "<html>"},
	}
	for _, tc := range cases {
		tr := &stubTransport{ctype: tc.ctype, body: tc.body}
		c, _ := stubCollector(t, tr)
		ran, said := false, false
		c.OnHTML("html", func(*colly.HTMLElement) { ran = true })
		c.OnResponse(func(r *colly.Response) { said = IsHTML(r) })
		if err := c.Visit("http://shop.test/"); err != nil {
			t.Fatal(err)
		}
		if ran != said {
			t.Errorf("Content-Type %q, body %q: Colly ran OnHTML %v, IsHTML %v", tc.ctype, tc.body, ran, said)
		}
	}
}

func TestIsZero(t *testing.T) {
	type cfg struct{ s []int }
	if !IsZero(cfg{}) || IsZero(cfg{s: []int{}}) || !IsZero[error](nil) || IsZero[error](errors.New("x")) {
		t.Fatal("IsZero is wrong")
	}
}

// A synchronous Visit returns a fetch's own error as Colly makes it: the
// status text of a non-2xx answer, or the client's *url.Error. Colly's
// refusals before any callback are not fetch errors.
func TestIsFetchErrorKnowsColly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	c := colly.NewCollector(colly.MaxRequests(1))
	err := c.Visit(srv.URL + "/a")
	if err == nil || !IsFetchError(err) {
		t.Fatalf("Visit of a 429 returned %v: not a fetch error", err)
	}
	if err := c.Visit(srv.URL + "/b"); !errors.Is(err, colly.ErrMaxRequests) || IsFetchError(err) {
		t.Fatalf("Visit past MaxRequests returned %v; a refusal is not a fetch error", err)
	}
	srv.Close()
	if err := colly.NewCollector().Visit(srv.URL + "/c"); err == nil || !IsFetchError(err) {
		t.Fatalf("Visit of a closed server returned %v: not a fetch error", err)
	}
}
