package validate

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
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
		before := heapAfterGC()
		d := newDiagnosis(DefaultBrokenAfter)
		for page := range 2 {
			for i := range n {
				u := "http://shop-" + strconv.Itoa(i) + ".example/product/" + strconv.Itoa(page+1)
				host := strings.TrimPrefix(u, "http://")
				host = host[:strings.IndexByte(host, '/')]
				d.page(Verdict{URL: u, Domain: host, Status: 200, Bytes: 1500 + i%100})
			}
		}
		after := heapAfterGC()
		b.ReportMetric(float64(after-before)/n, "B/domain")
		runtime.KeepAlive(d)
	}
}

func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
