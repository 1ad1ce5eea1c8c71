package breaker_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/observe"
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

// RoundTrip counts r on the wire until it returns or its context is
// done, whichever comes first: a request the breaker cut is off the wire
// for the client once cancelled, though the base transport may take a
// while to unwind on a loaded machine (a CI run counted a third request
// that way).
func (w *wireCount) RoundTrip(r *http.Request) (*http.Response, error) {
	h := r.URL.Host
	w.mu.Lock()
	w.on[h]++
	w.most[h] = max(w.most[h], w.on[h])
	w.mu.Unlock()
	var once sync.Once
	off := func() {
		once.Do(func() {
			w.mu.Lock()
			w.on[h]--
			w.mu.Unlock()
		})
	}
	stop := context.AfterFunc(r.Context(), off)
	resp, err := w.base.RoundTrip(r)
	stop()
	off()
	w.mu.Lock()
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
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	const share, healthyPages = 2, 40
	hang := startStore(t, testserver.Config{Products: 60, Scenario: testserver.Scenario{Mode: testserver.Hang, After: 25, Hold: 20 * time.Second}})
	var healthy []*testserver.Store
	for range 4 {
		healthy = append(healthy, startStore(t, testserver.Config{Products: healthyPages}))
	}
	p := breaker.Standard()
	p.TimeoutFloor = 300 * time.Millisecond // the hang is cut sooner; Slow stays the site's own
	b := newBreaker(t, breaker.Config{Profile: p})

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

// A page slower than its site's usual lends its slot of the shared
// LimitRule (lendWhileSlow), and another host's request takes the slot
// and keeps it through the rule's Delay. The page's headers come back in
// time, but taking a slot back waited past the client's timeout before
// its body was read: the read failed, counted as the site's failure,
// though the site answered well within the timeout. The wait for the slot
// is the crawler's, not the site's.
func TestASlowPagesLentSlotIsNotChargedToItsBody(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/slow" {
			time.Sleep(150 * time.Millisecond)
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush() // the headers now, the body a little later
			time.Sleep(20 * time.Millisecond)
		}
		fmt.Fprint(w, `<html><body><h1>product</h1></body></html>`)
	}))
	defer site.Close()
	start := time.Now()
	var otherAt atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherAt.Store(int64(time.Since(start)))
		fmt.Fprint(w, `<html><body><h1>other</h1></body></html>`)
	}))
	defer other.Close()

	var degraded atomic.Int32
	b := newBreaker(t, countDegraded(t, &degraded))
	// The site's usual: 25 quick pages, through a collector of its own.
	warm := colly.NewCollector()
	b.Register(warm)
	for i := range 25 {
		warm.Visit(fmt.Sprintf("%s/p/%d", site.URL, i))
	}
	c := oneDelayedSlot(t)
	b.Register(c)
	var got atomic.Int32
	c.OnHTML("h1", func(e *colly.HTMLElement) {
		if e.Request.URL.Path == "/slow" {
			got.Add(1)
		}
	})
	start = time.Now()
	c.Visit(site.URL + "/slow")
	time.Sleep(20 * time.Millisecond) // the page holds the rule's one slot
	c.Visit(other.URL + "/q")         // waits for it, gets the one the page lends
	c.Wait()
	mu.Lock()
	n := hits["/slow"]
	mu.Unlock()
	if got.Load() != 1 || n != 1 {
		t.Errorf("the site answered /slow %d times and it was collected %d times, want 1 and 1", n, got.Load())
	}
	if n := degraded.Load(); n != 0 {
		t.Errorf("%d degraded outcomes, want 0: the wait for a slot is the crawler's, not the site's", n)
	}
	if at := time.Duration(otherAt.Load()); at <= 0 || at >= 150*time.Millisecond {
		t.Errorf("the other host was served at %v, want before the slow page's answer (150 ms): the page did not lend its slot", at)
	}
}

// countDegraded is a breaker.Config that counts (and logs) the attempts
// the breaker classes Degraded into n.
func countDegraded(t *testing.T, n *atomic.Int32) breaker.Config {
	return breaker.Config{OnAttempt: func(a observe.Attempt) {
		if a.Result.Class == circuit.Degraded {
			n.Add(1)
			t.Logf("degraded: %s: %v", a.Request.URL, a.Err)
		}
	}}
}

// oneDelayedSlot is the user's async collector with a 300 ms timeout and
// one slot for every host, kept through a 400 ms Delay.
func oneDelayedSlot(t *testing.T, opts ...colly.CollectorOption) *colly.Collector {
	t.Helper()
	c := colly.NewCollector(append([]colly.CollectorOption{colly.Async(true)}, opts...)...)
	c.SetRequestTimeout(300 * time.Millisecond)
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 1, Delay: 400 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	return c
}
