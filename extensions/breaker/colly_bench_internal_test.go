package breaker

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/gocolly/colly/v2"
)

// BenchmarkRequestPath is the breaker's own work for one request that
// comes back a valid 200, as its Colly callbacks do it: the early check in
// OnRequest, the gate (pace and circuit) in OnRequestHeaders, the status in
// OnResponseHeaders, and the outcome in OnScraped, reported to an OnAttempt
// hook; with the Standard profile and per-domain pacing, over 5 domains.
//
//	go test -run '^$' -bench RequestPath -benchmem ./extensions/breaker/
func BenchmarkRequestPath(b *testing.B) {
	var outcomes int
	br, err := New(Config{Profile: Standard(), Pacing: Pacing{Parallelism: 2}, OnAttempt: func(observe.Attempt) { outcomes++ }})
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000
	reqs := make([]*colly.Request, n)
	resps := make([]*colly.Response, n)
	hdr := http.Header{"Content-Type": {"text/html"}}
	for i := range reqs {
		u, _ := url.Parse("http://shop-" + strconv.Itoa(i%5) + ".test:8080/products/sku-" + strconv.Itoa(i))
		reqs[i] = &colly.Request{URL: u, Method: "GET", Ctx: colly.NewContext()}
		resps[i] = &colly.Response{Request: reqs[i], StatusCode: 200, Headers: &hdr}
	}
	c := colly.NewCollector()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r, resp := reqs[i%n], resps[i%n]
		br.onRequest(c, 0, r)
		br.gate(c, nil, r)
		br.onResponseHeaders(resp)
		br.finish(c, resp, nil)
		i++
	}
	if outcomes != i {
		b.Fatalf("%d outcomes reported for %d requests", outcomes, i)
	}
}

// BenchmarkQueuedRequestPath is BenchmarkRequestPath with requests
// queueing: 64 goroutines per CPU send to one domain paced to 2 in flight,
// so nearly every request waits for its reservation and is handed a slot
// another request freed: the cost of the wait and the hand-off.
//
//	go test -run '^$' -bench QueuedRequestPath -benchmem ./extensions/breaker/
func BenchmarkQueuedRequestPath(b *testing.B) {
	br, err := New(Config{Profile: Standard(), Pacing: Pacing{Parallelism: 2}})
	if err != nil {
		b.Fatal(err)
	}
	c := colly.NewCollector()
	hdr := http.Header{"Content-Type": {"text/html"}}
	u, _ := url.Parse("http://shop.test:8080/products/sku-1")
	b.ReportAllocs()
	b.SetParallelism(64)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := &colly.Request{URL: u, Method: "GET", Ctx: colly.NewContext()}
			resp := &colly.Response{Request: r, StatusCode: 200, Headers: &hdr}
			br.onRequest(c, 0, r)
			br.gate(c, nil, r)
			br.onResponseHeaders(resp)
			br.finish(c, resp, nil)
		}
	})
	if st := br.Stats(); len(st) != 1 || st[0].Outcomes[circuit.Success.String()] == 0 {
		b.Fatalf("no success recorded: %+v", st)
	}
}
