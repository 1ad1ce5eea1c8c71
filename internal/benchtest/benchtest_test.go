package benchtest

import (
	"runtime"
	"testing"
)

// What is kept alive weighs; what is let go does not.
func TestLiveHeapWeighsWhatIsKept(t *testing.T) {
	before := LiveHeap()
	kept := make([]byte, 8<<20)
	// Other garbage of the test binary's may be let go meanwhile: a few
	// bytes less than kept is still what was kept (it once read 8 MiB
	// − 16 B).
	if grown := LiveHeap() - before; grown < 8<<20-64<<10 {
		t.Errorf("8 MiB kept, the heap grew by %d bytes", grown)
	}
	runtime.KeepAlive(kept)
	kept = nil
	if grown := LiveHeap() - before; grown > 1<<20 {
		t.Errorf("8 MiB let go, the heap is still %d bytes larger", grown)
	}
}
