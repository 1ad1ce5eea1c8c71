// Package benchtest weighs what state costs, for the benchmarks that
// measure it per domain or per record: the live heap, and what the
// garbage collector spends marking it.
package benchtest

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

// LiveHeap returns the bytes of live heap objects once two garbage
// collections have run: the second finishes what the first's cleanups
// and finalizers let go.
func LiveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// MarkCPU returns the CPU seconds the collector has spent marking so far
// (assists, dedicated and idle workers: an estimate the runtime keeps).
func MarkCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64() + s[1].Value.Float64() + s[2].Value.Float64()
}

// EachCollection runs b's loop with one full collection an op, and
// reports the collector's marking CPU a collection (mark-ms/gc: what the
// live data costs it; runtime.GC also sweeps the whole heap before it
// returns, which ns/op includes) and bytes over n (heap-B/unit).
func EachCollection(b *testing.B, bytes int64, n int, unit string) {
	mark0 := MarkCPU()
	for b.Loop() {
		runtime.GC()
	}
	b.ReportMetric((MarkCPU()-mark0)/float64(b.N)*1e3, "mark-ms/gc")
	b.ReportMetric(float64(bytes)/float64(n), "heap-B/"+unit)
}
