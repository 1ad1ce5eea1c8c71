package validate

import (
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/breakwater-crawl/breakwater/internal/benchtest"
)

// BenchmarkIdleDomainBytes measures what one domain of a broad crawl costs
// the validator's diagnosis once its pages are scored: N domains, two
// valid pages each of about 1.5 KB, each verdict's domain part of its URL
// as the validator makes it; heap after GC, less the heap before, over N.
// Run:
//
//	go test -run '^$' -bench IdleDomainBytes -benchtime 1x ./extensions/validate/
func BenchmarkIdleDomainBytes(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		before := benchtest.LiveHeap()
		d := newDiagnosis(DefaultBrokenAfter)
		for page := range 2 {
			for i := range n {
				u := "http://shop-" + strconv.Itoa(i) + ".example/product/" + strconv.Itoa(page+1)
				host := strings.TrimPrefix(u, "http://")
				host = host[:strings.IndexByte(host, '/')]
				d.page(Verdict{URL: u, Domain: host, Status: 200, Bytes: 1500 + i%100})
			}
		}
		after := benchtest.LiveHeap()
		b.ReportMetric(float64(after-before)/n, "B/domain")
		runtime.KeepAlive(d)
	}
}

// BenchmarkDiagnosisParallel records valid pages of 10,000 domains from 64
// goroutines at once, as a broad crawl's visiting goroutines do: what the
// diagnosis's locking costs under contention.
//
//	go test -run '^$' -bench DiagnosisParallel -benchmem ./extensions/validate/
func BenchmarkDiagnosisParallel(b *testing.B) {
	const domains = 10_000
	names := make([]string, domains)
	for i := range names {
		names[i] = "shop-" + strconv.Itoa(i) + ".test"
	}
	d := newDiagnosis(DefaultBrokenAfter)
	var next atomic.Int64
	b.SetParallelism(32) // × GOMAXPROCS goroutines
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			dom := names[next.Add(1)%domains]
			d.page(Verdict{URL: "http://" + dom + "/p", Domain: dom, Status: 200, Bytes: 1500})
		}
	})
}
