package packmap

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/breakwater-crawl/breakwater/internal/benchtest"
)

// BenchmarkGCOverMap is what a million hosts' records cost every garbage
// collection: one op is a full collection with the map live, in a Map and
// in a map[string]string side by side (the breaker's compacted domains and
// the validator's compact diagnosis were kept in the latter):
//
//	go test -run '^$' -bench GCOverMap -benchtime 20x ./internal/packmap/
//
// mark-ms/gc is the collector's marking CPU a collection, heap-B/key the
// heap a key takes.
func BenchmarkGCOverMap(b *testing.B) {
	const n = 1_000_000
	key := func(i int) string { return fmt.Sprintf("shop-%d.example.test:8080", i) }
	val := func(i int) string { return fmt.Sprintf("\x02\x14\x00%08d\x01\x00", i) }
	b.Run("packmap", func(b *testing.B) {
		before := benchtest.LiveHeap()
		var m Map
		for i := range n {
			m.Set(key(i), val(i))
		}
		benchtest.EachCollection(b, benchtest.LiveHeap()-before, n, "key")
		if m.Len() != n {
			b.Fatal("keys lost")
		}
		runtime.KeepAlive(&m)
	})
	b.Run("gomap", func(b *testing.B) {
		before := benchtest.LiveHeap()
		m := make(map[string]string)
		for i := range n {
			m[key(i)] = val(i)
		}
		benchtest.EachCollection(b, benchtest.LiveHeap()-before, n, "key")
		if len(m) != n {
			b.Fatal("keys lost")
		}
		runtime.KeepAlive(m)
	})
}
