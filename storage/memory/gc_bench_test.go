package memory_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/internal/benchtest"
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
		before := benchtest.LiveHeap()
		s := memory.New()
		for i := range n {
			if err := s.Put(rec(i)); err != nil {
				b.Fatal(err)
			}
		}
		benchtest.EachCollection(b, benchtest.LiveHeap()-before, n, "record")
		if c, _ := s.Counts(); c[storage.Done] != n {
			b.Fatalf("store holds %v", c)
		}
		runtime.KeepAlive(s)
	})
	b.Run("records", func(b *testing.B) {
		before := benchtest.LiveHeap()
		recs := make([]storage.Record, 0, n)
		for i := range n {
			recs = append(recs, rec(i))
		}
		benchtest.EachCollection(b, benchtest.LiveHeap()-before, n, "record")
		runtime.KeepAlive(recs)
	})
}
