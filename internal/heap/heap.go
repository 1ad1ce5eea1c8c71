// Package heap weighs the live heap, for the benchmarks that measure what
// state costs per domain.
package heap

import "runtime"

// AfterGC returns the bytes of live heap objects once two garbage
// collections have run: the second finishes what the first's cleanups
// and finalizers let go.
func AfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
