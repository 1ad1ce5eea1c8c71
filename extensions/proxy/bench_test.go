package proxy_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
)

// The cost the Pool adds to each request: one pick and one record.
func BenchmarkProxyFuncAndRecord(b *testing.B) {
	p, err := proxy.New(exact(clocktest.NewFake(t0), four...))
	if err != nil {
		b.Fatal(err)
	}
	pf := p.ProxyFunc()
	r, _ := http.NewRequest("GET", "http://site.test/", nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			u, err := pf(r.Clone(r.Context()))
			if err != nil {
				b.Fatal(err)
			}
			p.Record(proxy.Attempt{Proxy: u.String(), Domain: "site.test", Status: 200, Latency: time.Millisecond})
		}
	})
}
