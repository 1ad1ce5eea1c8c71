package checkpoint

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/internal/observed"
)

// Every state observed.StateOf can return is an event of the checkpoint
// (observed.Settled is the last of them).
func TestEveryURLStateIsAnEvent(t *testing.T) {
	for s := observed.Done; s <= observed.Settled; s++ {
		if int(s) >= len(stateEvents) || stateEvents[s] == 0 {
			t.Errorf("observed.URLState %d has no checkpoint event", s)
		}
	}
	if len(stateEvents) != int(observed.Settled)+1 {
		t.Errorf("stateEvents has %d entries; want one per observed.URLState up to Settled", len(stateEvents))
	}
}
