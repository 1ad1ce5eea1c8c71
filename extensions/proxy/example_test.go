package proxy_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/gocolly/colly/v2"
)

// A proxy that fails three times in a row leaves the rotation; after its
// cooldown the rotation gives it one probe, which restores it.
func Example() {
	clk := clocktest.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	pool, err := proxy.New(proxy.Config{
		Proxies: []string{"http://user:pw@a.example:8080", "http://user:pw@b.example:8080", "http://user:pw@c.example:8080"},
		Jitter:  -1, // exact cooldowns, for the example
		Clock:   clk,
		OnEject: func(s proxy.Snapshot) { fmt.Println("ejected", s.Name, "until", s.RetryAt.Format(time.TimeOnly)) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	next := pool.ProxyFunc()
	rotation := func() (names []string) {
		for range 4 {
			r, _ := http.NewRequest("GET", "http://shop.example/", nil)
			u, _ := next(r)
			names = append(names, u.Host)
		}
		return names
	}
	refused := &net.OpError{Op: "proxyconnect", Net: "tcp", Err: errors.New("connection refused")}
	for range 3 {
		pool.Record(proxy.Attempt{Proxy: "http://user:pw@b.example:8080", Domain: "shop.example", Err: refused})
	}
	fmt.Println(rotation())
	clk.Advance(30 * time.Second)
	fmt.Println(rotation()) // b.example's probe among them
	pool.Record(proxy.Attempt{Proxy: "b.example:8080", Domain: "shop.example", Status: 200, Latency: 40 * time.Millisecond})
	s := pool.Stats()[1]
	fmt.Println(s.Name, s.State, s.Ejections, s.Outcomes)
	// Output:
	// ejected b.example:8080 until 12:00:30
	// [a.example:8080 c.example:8080 a.example:8080 c.example:8080]
	// [a.example:8080 b.example:8080 c.example:8080 a.example:8080]
	// b.example:8080 closed 1 map[carried:1 connect_failed:3]
}

// tracked charges each round trip to its proxy: Track names the proxy
// ProxyFunc chose, Record judges what the outcome says about it.
type tracked struct {
	base http.RoundTripper
	pool *proxy.Pool
}

func (t tracked) RoundTrip(r *http.Request) (*http.Response, error) {
	r, carrier := proxy.Track(r)
	start := time.Now()
	resp, err := t.base.RoundTrip(r)
	if name := carrier(); name != "" {
		status, h := 0, http.Header(nil)
		if resp != nil {
			status, h = resp.StatusCode, resp.Header
		}
		t.pool.Record(proxy.Attempt{Proxy: name, Domain: r.URL.Host, Status: status, Header: h, Err: err, Latency: time.Since(start)})
	}
	return resp, err
}

// A collector rotating over a pool, each attempt charged to its proxy at
// the transport (Colly's Request.ProxyURL is empty with its default
// client timeout; see Track).
func ExampleTrack() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer site.Close()
	forward := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.Out.URL = pr.In.URL }})
	defer forward.Close()
	pool, err := proxy.New(proxy.Config{Proxies: []string{forward.URL, "http://127.0.0.1:1"}}) // the second refuses
	if err != nil {
		fmt.Println(err)
		return
	}
	c := colly.NewCollector(colly.AllowURLRevisit())
	c.WithTransport(tracked{base: &http.Transport{Proxy: pool.ProxyFunc(), DisableKeepAlives: true}, pool: pool})
	for range 8 {
		c.Visit(site.URL)
	}
	for _, s := range pool.Stats() {
		fmt.Println(s.State, s.Sent, s.Outcomes)
	}
	// Output:
	// closed 5 map[carried:5]
	// open 3 map[connect_failed:3]
}
