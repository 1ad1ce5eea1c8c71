package packmap

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
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
		before := liveHeap()
		var m Map
		for i := range n {
			m.Set(key(i), val(i))
		}
		collectEach(b, liveHeap()-before, n)
		if m.Len() != n {
			b.Fatal("keys lost")
		}
		runtime.KeepAlive(&m)
	})
	b.Run("gomap", func(b *testing.B) {
		before := liveHeap()
		m := make(map[string]string)
		for i := range n {
			m[key(i)] = val(i)
		}
		collectEach(b, liveHeap()-before, n)
		if len(m) != n {
			b.Fatal("keys lost")
		}
		runtime.KeepAlive(m)
	})
}

func collectEach(b *testing.B, bytes uint64, n int) {
	mark0 := markCPU()
	for b.Loop() {
		runtime.GC()
	}
	b.ReportMetric((markCPU()-mark0)/float64(b.N)*1e3, "mark-ms/gc")
	b.ReportMetric(float64(bytes)/float64(n), "heap-B/key")
}

func markCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64() + s[1].Value.Float64() + s[2].Value.Float64()
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
