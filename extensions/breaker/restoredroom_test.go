package breaker_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
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
	var served atomic.Int32
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		time.Sleep(25 * time.Millisecond)
		fmt.Fprint(w, `<html><body><h1>product</h1></body></html>`)
	}))
	defer store.Close()

	b := newBreaker(t, breaker.Standard())
	need := breaker.Standard().Settings().FailuresToTrip()
	host := store.Listener.Addr().String()
	if err := b.Restore(breaker.DomainSnapshot{Domain: host, State: circuit.Closed, WindowLen: need - 1, WindowFailures: need - 1}); err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector(colly.Async(true))
	c.SetRequestTimeout(300 * time.Millisecond)
	b.Register(c)
	detail := c.Clone() // not registered: its requests wait for room at the transport
	got := tallyClone(detail)
	detail.Visit(store.URL + "/p0") // answered well once in this run
	detail.Wait()
	got.reset()
	for i := 1; i <= products; i++ {
		detail.Visit(fmt.Sprintf("%s/p%d", store.URL, i))
	}
	detail.Wait()

	got.check(t, products, int(served.Load())-1, "refused")
}
