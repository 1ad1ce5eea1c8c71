package breaker_test

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// slowStore's circuits take a while to record an outcome, as a shared
// store across a network does: the window between an outcome known and
// an outcome recorded, held open on purpose.
type slowStore struct{ delay time.Duration }

func (s slowStore) Circuit(domain string, p circuit.Settings) (circuit.Circuit, error) {
	c, err := circuit.MemoryStore{}.Circuit(domain, p)
	return slowCircuit{c, s.delay}, err
}

type slowCircuit struct {
	circuit.Circuit
	delay time.Duration
}

func (c slowCircuit) Record(clk clock.Clock, p circuit.Ticket, o circuit.Result) (circuit.Transition, error) {
	time.Sleep(c.delay)
	return c.Circuit.Record(clk, p, o)
}

// TestNoRequestLeavesWhileTheTrippingOutcomeIsBeingRecorded holds every
// recording back 5 ms and counts, in the store's request log, the
// requests sent into a failing store: a slot freed before its outcome is
// recorded would let more than need + P − 1 through.
func TestNoRequestLeavesWhileTheTrippingOutcomeIsBeingRecorded(t *testing.T) {
	need := breaker.FailuresToTrip(breaker.Standard())
	for _, w := range dropInWirings() {
		if w.slow || w.retry {
			continue
		}
		t.Run(w.name, func(t *testing.T) {
			store := startStore(t, testserver.Config{Products: 100, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 5}})
			run := runDropIn(t, w, store, productURLs(store, 100), breaker.Config{Store: slowStore{5 * time.Millisecond}})
			if !run.ended {
				return
			}
			if got, bound := store.SentAfterFailing(), need+w.parallelism(breaker.Standard())-1; got > bound {
				t.Errorf("%s: %d requests into the failing store, want at most %d", w.name, got, bound)
			}
		})
	}
}
