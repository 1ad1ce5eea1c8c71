package breaker_test

import (
	"github.com/breakwater-crawl/breakwater/observe"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A resumed crawl restores a domain's window with the requests in flight
// at the last run's death counted as failures, which leaves it little
// room. A clone's requests (gated at the transport) queued for that room
// wait for it as for a healthy domain's: none is refused for waiting past
// half its client's timeout while the domain has failed nothing in this
// run (chaos seed 5133634285216213978: a healthy store whose products
// mostly answer 404, refused "held back" after a kill and a resume).
func TestARestoredWindowDoesNotMakeAHealthyDomainRefuseWaitingRequests(t *testing.T) {
	const products = 16
	store := startStore(t, testserver.Config{Products: products + 1, Scenario: testserver.Scenario{Latency: 25 * time.Millisecond}})

	b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
	need := breaker.Standard().Settings().FailuresToTrip()
	if err := b.Restore(observe.DomainCircuit{Domain: store.Host(), State: circuit.Closed, WindowLen: need - 1, WindowFailures: need - 1}); err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector(colly.Async(true))
	c.SetRequestTimeout(300 * time.Millisecond)
	b.Register(c)
	detail := c.Clone() // not registered: its requests wait for room at the transport
	got := tallyClone(detail)
	detail.Visit(store.ProductURL(products + 1)) // answered well once in this run
	detail.Wait()
	got.reset()
	for i := 1; i <= products; i++ {
		detail.Visit(store.ProductURL(i))
	}
	detail.Wait()

	got.check(t, products, store.Count()-1, "refused")
}
