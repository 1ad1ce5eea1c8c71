package breaker_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// downStore is a shared store that cannot answer and fails closed: its
// refusal is ErrOpen, not a *CircuitOpenError.
type downStore struct{}

type downCircuit struct{}

var errDownClosed = fmt.Errorf("store unreachable, failing closed: %w", breaker.ErrOpen)

func (downStore) Circuit(string, circuit.Settings) (circuit.Circuit, error) {
	return downCircuit{}, nil
}
func (downCircuit) Allow(clock.Clock) (circuit.Ticket, circuit.Transition, error) {
	return circuit.Ticket{}, circuit.Transition{}, errDownClosed
}
func (downCircuit) Record(clock.Clock, circuit.Ticket, circuit.Result) (circuit.Transition, error) {
	return circuit.Transition{}, nil
}
func (downCircuit) Snapshot(clock.Clock) (circuit.Snapshot, error) {
	return circuit.Snapshot{}, nil
}
func (downCircuit) HoldOpen(clock.Clock, time.Time, string) (circuit.Transition, error) {
	return circuit.Transition{}, errDownClosed
}
func (downCircuit) RestoreOpen(clock.Clock, time.Time, int) (circuit.Transition, error) {
	return circuit.Transition{}, errDownClosed
}
func (downCircuit) Pause(clock.Clock, time.Time) error { return errDownClosed }
func (downCircuit) WindowFailures() int                { return 0 }

func TestAStoreFailingClosedParksRequestsQuietly(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 10})
	var log syncBuffer
	var ref refusals
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Store: downStore{}, OnRefused: ref.hook, Logger: zerolog.New(&log)})
	c := colly.NewCollector()
	b.Register(c)
	for i := 1; i <= 10; i++ {
		c.Visit(store.ProductURL(i))
	}
	if store.Count() != 0 || ref.len() != 10 {
		t.Fatalf("%d requests reached the store, %d refused: a store that cannot decide must refuse (fail closed)", store.Count(), ref.len())
	}
	if st := b.Stats()[0]; st.Refused != 10 {
		t.Fatalf("refused counter %d, want 10", st.Refused)
	}
	if strings.Contains(log.String(), `"level":"error"`) {
		t.Fatalf("a store failing closed logged an error per request:\n%s", log.String())
	}
	if !errors.Is(errDownClosed, breaker.ErrOpen) {
		t.Fatal("test store error does not match ErrOpen")
	}
}
