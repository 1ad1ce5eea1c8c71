package checkpoint

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/observe"
)

// Every state observe.StateOf can return is an event of the checkpoint
// (observe.Settled is the last of them).
func TestEveryURLStateIsAnEvent(t *testing.T) {
	for s := observe.Done; s <= observe.Settled; s++ {
		if int(s) >= len(stateEvents) || stateEvents[s] == 0 {
			t.Errorf("observe.URLState %d has no checkpoint event", s)
		}
	}
	if len(stateEvents) != int(observe.Settled)+1 {
		t.Errorf("stateEvents has %d entries; want one per observe.URLState up to Settled", len(stateEvents))
	}
}
