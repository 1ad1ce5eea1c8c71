package packmap

import (
	"strconv"
	"testing"
)

// A Recent keeps the keys used last and drops the oldest: at most 2×Size
// keys, a key read from the older generation kept, a deleted key gone,
// and nothing dropped once KeepAll is set.
func TestRecentKeepsTheKeysUsedLast(t *testing.T) {
	const size = 8
	m := NewRecent[int](size)
	for i := range 3 * size {
		m.Put("k"+strconv.Itoa(i), i)
		if i == size { // k0 is in the older generation now: a read keeps it
			if v, ok := m.Get("k0"); !ok || v != 0 {
				t.Fatalf("k0 = %d, %v after %d keys, want 0, true", v, ok, i+1)
			}
		}
	}
	if n := m.Len(); n > 2*size {
		t.Errorf("%d keys held, want at most %d", n, 2*size)
	}
	if m.Has("k1") {
		t.Error("k1, the oldest never read again, is still held")
	}
	if v, ok := m.Get("k" + strconv.Itoa(3*size-1)); !ok || v != 3*size-1 {
		t.Errorf("the latest key: %d, %v", v, ok)
	}
	m.Delete("k" + strconv.Itoa(3*size-1))
	if m.Has("k" + strconv.Itoa(3*size-1)) {
		t.Error("a deleted key is still held")
	}
	m.KeepAll = true
	for i := range 4 * size {
		m.Put("all"+strconv.Itoa(i), i)
	}
	for i := range 4 * size {
		if !m.Has("all" + strconv.Itoa(i)) {
			t.Fatalf("all%d dropped after KeepAll", i)
		}
	}
}

// A key put again while in the older generation is held once.
func TestRecentHoldsAKeyOnce(t *testing.T) {
	m := NewRecent[int](2)
	for _, k := range []string{"a", "b", "c", "a"} {
		m.Put(k, 1)
	}
	if n := m.Len(); n != 3 {
		t.Errorf("%d keys held for a, b, c, a; want 3", n)
	}
}
