package storage_test

import (
	"fmt"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage"
)

func TestStatesAreTheSixValidOnes(t *testing.T) {
	seen := map[string]bool{}
	for _, st := range storage.States() {
		if !st.Valid() || seen[st.String()] {
			t.Errorf("%d (%v): valid %v, name seen before %v", st, st, st.Valid(), seen[st.String()])
		}
		seen[st.String()] = true
	}
	if len(seen) != 6 {
		t.Errorf("%d states, want 6", len(seen))
	}
	for _, bad := range []storage.State{0, storage.Dead + 1, 255} {
		if bad.Valid() || bad.String() != fmt.Sprintf("State(%d)", uint8(bad)) {
			t.Errorf("State(%d): Valid %v, String %q", uint8(bad), bad.Valid(), bad.String())
		}
	}
}

func ExampleState() {
	for _, st := range storage.States() {
		fmt.Print(st, " ")
	}
	fmt.Println(storage.State(0))
	// Output: pending in-flight done failed parked dead State(0)
}
