package breaker_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// wireCount is the user's transport under the breaker: it sees what goes
// on the wire, per host, and counts the healthy answers that came back
// while the hanging host had its whole share of the LimitRule in flight.
type wireCount struct {
	base     http.RoundTripper
	hang     string
	share    int
	mu       sync.Mutex
	on       map[string]int
	most     map[string]int
	besideIt int // healthy answers while the hanging host had share in flight
}

func (w *wireCount) RoundTrip(r *http.Request) (*http.Response, error) {
	h := r.URL.Host
	w.mu.Lock()
	w.on[h]++
	w.most[h] = max(w.most[h], w.on[h])
	w.mu.Unlock()
	resp, err := w.base.RoundTrip(r)
	w.mu.Lock()
	w.on[h]--
	if h != w.hang && err == nil && w.on[w.hang] >= w.share {
		w.besideIt++
	}
	w.mu.Unlock()
	return resp, err
}

// A site that starts hanging, behind the drop-in's shared LimitRule
// {DomainGlob: "*", Parallelism: 2}: each request into the hang would hold
// one of the two slots every site shares until the adaptive timeout cuts
// it, and with both held no other site's page leaves. Judged at the wire,
// under the breaker: other sites' pages keep arriving while the hanging
// site has both its requests in flight (none could before the slots were
// lent), the hanging site never has more in flight than the rule's 2, and
// it gets no more requests than the trip bound.
func TestAHangingSiteLendsItsSharedSlots(t *testing.T) {
	const share, healthyPages = 2, 40
	hang := startStore(t, testserver.Config{Products: 60, Scenario: testserver.Scenario{Mode: testserver.Hang, After: 25, Hold: 20 * time.Second}})
	var healthy []*testserver.Store
	for range 4 {
		healthy = append(healthy, startStore(t, testserver.Config{Products: healthyPages}))
	}
	p := breaker.Standard()
	p.TimeoutFloor = 300 * time.Millisecond // the hang is cut sooner; Slow stays the site's own
	b := newBreaker(t, p)

	c := colly.NewCollector(colly.Async(true))
	c.SetRequestTimeout(10 * time.Second)
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: share}); err != nil {
		t.Fatal(err)
	}
	wire := &wireCount{base: http.DefaultTransport, hang: hang.Host(), share: share, on: map[string]int{}, most: map[string]int{}}
	c.WithTransport(wire)
	b.Register(c)

	// The hanging site's first 25 pages teach the breaker its latency,
	// then its pages and the others' take turns in the queue.
	for i := 1; i <= 25; i++ {
		c.Visit(hang.ProductURL(i))
	}
	c.Wait()
	for i := 1; i <= healthyPages; i++ {
		c.Visit(hang.ProductURL(25 + i%35 + 1))
		for _, s := range healthy {
			c.Visit(s.ProductURL(i))
		}
	}
	c.Wait()

	for _, s := range healthy {
		if n := s.Count(); n != healthyPages {
			t.Errorf("%s received %d requests; want its %d pages once each", s.Host(), n, healthyPages)
		}
	}
	need := breaker.FailuresToTrip(p)
	if got := hang.SentAfterFailing(); got < need || got > need+share-1 {
		t.Errorf("%d requests into the hang; want %d..%d (need + P − 1)", got, need, need+share-1)
	}
	if got := wire.most[hang.Host()]; got > share {
		t.Errorf("the hanging site had %d requests in flight at once; the LimitRule allows %d", got, share)
	}
	if wire.besideIt == 0 {
		t.Errorf("no other site's page came back while the hanging site held both shared slots: the hang kept them from every site")
	}
	t.Logf("into the hang %d, most in flight there %d, healthy answers while it had %d in flight: %d", hang.SentAfterFailing(), wire.most[hang.Host()], share, wire.besideIt)
}
