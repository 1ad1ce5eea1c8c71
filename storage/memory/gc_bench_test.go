package memory_test

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/memory"
)

// BenchmarkGCOverRecords is what a million records cost every garbage
// collection while a crawl runs: one op is a full collection (runtime.GC)
// with the records live. "store" keeps them in this store; "records" in a
// []storage.Record, as the store kept them before its arena (a URL string
// and a request slice of their own each), side by side in one run:
//
//	go test -run '^$' -bench GCOverRecords -benchtime 5x ./storage/memory/
//
// It reports the collector's marking CPU a collection (mark-ms/gc) and
// the heap each record takes (heap-B/record).
func BenchmarkGCOverRecords(b *testing.B) {
	const n = 1_000_000
	rec := func(i int) storage.Record {
		u := fmt.Sprintf("http://shop-%d.test/products/sku-%d", i%100_000, i)
		return storage.Record{ID: uint64(i), URL: u, State: storage.Done, Attempts: 1, Updated: time.Now(),
			Request: fmt.Appendf(nil, `{"URL":%q,"Method":"GET","Depth":1,"ID":%d,"Ctx":"{}","Headers":{"User-Agent":["colly - https://github.com/gocolly/colly/v2"]}}`, u, i)}
	}
	b.Run("store", func(b *testing.B) {
		before := heap()
		s := memory.New()
		for i := range n {
			if err := s.Put(rec(i)); err != nil {
				b.Fatal(err)
			}
		}
		gcEach(b, heap()-before, n)
		if c, _ := s.Counts(); c[storage.Done] != n {
			b.Fatalf("store holds %v", c)
		}
		runtime.KeepAlive(s)
	})
	b.Run("records", func(b *testing.B) {
		before := heap()
		recs := make([]storage.Record, 0, n)
		for i := range n {
			recs = append(recs, rec(i))
		}
		gcEach(b, heap()-before, n)
		runtime.KeepAlive(recs)
	})
}

// gcEach collects b.N times and reports the CPU the collector spent
// marking, a collection (what the records cost it: runtime.GC also sweeps
// the whole heap before it returns, which ns/op includes), and the heap a
// record takes.
func gcEach(b *testing.B, bytes uint64, n int) {
	mark0 := markCPU()
	for b.Loop() {
		runtime.GC()
	}
	b.ReportMetric(float64(markCPU()-mark0)/float64(b.N)*1e3, "mark-ms/gc")
	b.ReportMetric(float64(bytes)/float64(n), "heap-B/record")
}

// markCPU is the CPU seconds the collector has spent marking so far (an
// estimate the runtime keeps).
func markCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64() + s[1].Value.Float64() + s[2].Value.Float64()
}

// heap is the live heap after a full collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
