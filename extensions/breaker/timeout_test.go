package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
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

func TestAdaptiveTimeoutCutsAHangingDomain(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 60, Scenario: testserver.Scenario{
		Mode: testserver.Hang, After: 30, Latency: 2 * time.Millisecond, Hold: 20 * time.Second}})
	p := breaker.Standard()
	p.Name, p.ConsecutiveFailures = "cut", 3
	p.TimeoutMultiple, p.TimeoutFloor, p.TimeoutAfter = 4, 150*time.Millisecond, 20
	var attempts []observe.Attempt
	b := newBreaker(t, breaker.Config{Profile: p, OnAttempt: func(a observe.Attempt) { attempts = append(attempts, a) }})
	c := colly.NewCollector()
	c.SetRequestTimeout(10 * time.Second) // the client's own: far too long for a 2 ms site
	b.Register(c)
	for i := 1; i <= 60; i++ {
		c.Visit(store.ProductURL(i))
	}
	// 4 × a p95 of a few ms is below the 150 ms floor; a loaded machine
	// (the race detector, CI) can stretch a few of the pages' latencies
	// past 40 ms, and the timeout with them, but never near the client's.
	st := b.Stats()[0]
	if st.Timeout < 150*time.Millisecond || st.Timeout > time.Second {
		t.Fatalf("adaptive timeout %v, want the 150ms floor, or a little above it on a loaded machine", st.Timeout)
	}
	if st.State != circuit.Open || st.Outcomes[circuit.Degraded.String()] != 3 || store.Count() != 33 {
		t.Fatalf("stats %+v, %d requests: want three cut requests (degraded) tripping the circuit after 33", st, store.Count())
	}
	var cut int
	for _, a := range attempts {
		var te *breaker.TimeoutError
		if errors.As(a.Err, &te) {
			cut++
			if te.After != st.Timeout || te.Domain != store.Host() || !errors.Is(a.Err, context.DeadlineExceeded) {
				t.Fatalf("timeout error %+v", te)
			}
			if a.Result.Latency >= 5*time.Second {
				t.Fatalf("a cut request took %v: the client's 10 s timeout applied, not the adaptive one", a.Result.Latency)
			}
		}
	}
	if cut != 3 {
		t.Fatalf("%d requests cut by the adaptive timeout, want 3", cut)
	}
}

func TestNoAdaptiveTimeoutWithoutEnoughSuccesses(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 10})
	p := breaker.Standard()
	p.TimeoutAfter = 20
	b := newBreaker(t, breaker.Config{Profile: p})
	c := colly.NewCollector()
	b.Register(c)
	for i := 1; i <= 10; i++ {
		c.Visit(store.ProductURL(i))
	}
	if st := b.Stats()[0]; st.Timeout != 0 {
		t.Fatalf("timeout %v after 10 successes, want none before 20", st.Timeout)
	}
}

// hangAfter starts a store whose first healthy pages earn its domain an
// adaptive timeout of floor, then hangs, and a breaker whose timeout needs
// only those pages; it returns the store, the breaker and the attempts.
func hangAfter(t *testing.T, healthy int, floor time.Duration) (*testserver.Store, *breaker.Breaker, func() []observe.Attempt) {
	t.Helper()
	store := startStore(t, testserver.Config{Products: healthy + 5, Scenario: testserver.Scenario{
		Mode: testserver.Hang, After: healthy, Latency: time.Millisecond, Hold: 20 * time.Second}})
	p := breaker.Standard()
	p.Name = "cut"
	p.TimeoutMultiple, p.TimeoutFloor, p.TimeoutAfter = 4, floor, healthy
	var mu sync.Mutex
	var attempts []observe.Attempt
	b := newBreaker(t, breaker.Config{Profile: p, OnAttempt: func(a observe.Attempt) {
		mu.Lock()
		attempts = append(attempts, a)
		mu.Unlock()
	}})
	return store, b, func() []observe.Attempt {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(attempts)
	}
}

// TestCrawlEndCutsARequestOnATimedDomain: a request in flight to a domain
// with an adaptive timeout ends as soon as the crawl's context does, not
// at its timeout, and counts as cancelled, not against the site.
func TestCrawlEndCutsARequestOnATimedDomain(t *testing.T) {
	const healthy = 20
	store, b, attempts := hangAfter(t, healthy, 10*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := colly.NewCollector(colly.StdlibContext(ctx))
	c.SetRequestTimeout(15 * time.Second)
	b.Register(c)
	for i := 1; i <= healthy; i++ {
		c.Visit(store.ProductURL(i))
	}
	if st := b.Stats()[0]; st.Timeout != 10*time.Second {
		t.Fatalf("adaptive timeout %v, want the 10s floor", st.Timeout)
	}
	go func() {
		for store.CountMode(testserver.Hang) == 0 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	c.Visit(store.ProductURL(healthy + 1))
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("the hanging request ended %v after it left; the crawl's end should cut it at once", el)
	}
	all := attempts()
	if len(all) != healthy+1 {
		t.Fatalf("%d attempts, want %d", len(all), healthy+1)
	}
	last := all[healthy]
	var te *breaker.TimeoutError
	if !last.Cancelled || last.Result.Class != circuit.Excluded || errors.As(last.Err, &te) || !errors.Is(last.Err, context.Canceled) {
		t.Fatalf("last attempt %+v: want cancelled by the crawl (excluded, context.Canceled), not a timeout", last)
	}
}

// TestClientTimeoutBelowTheAdaptiveOneStillCuts: the client's own timeout
// (Colly's SetRequestTimeout) shorter than the domain's adaptive timeout
// cuts the request at the client's, with the client's error, not a
// *TimeoutError.
func TestClientTimeoutBelowTheAdaptiveOneStillCuts(t *testing.T) {
	const healthy = 20
	store, b, attempts := hangAfter(t, healthy, 10*time.Second)
	c := colly.NewCollector()
	c.SetRequestTimeout(300 * time.Millisecond)
	b.Register(c)
	for i := 1; i <= healthy; i++ {
		c.Visit(store.ProductURL(i))
	}
	start := time.Now()
	err := c.Visit(store.ProductURL(healthy + 1))
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("the hanging request ended %v after it left; the client's 300ms timeout should cut it", el)
	}
	var te *breaker.TimeoutError
	var ne net.Error
	if err == nil || errors.As(err, &te) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("error %v: want the client's own timeout", err)
	}
	all := attempts()
	if last := all[len(all)-1]; last.Result.Class != circuit.Degraded || last.Cancelled {
		t.Fatalf("last attempt %+v: a client timeout counts against the site", last)
	}
}

// TestAdaptiveTimeoutCutsABodyThatStalls: an answer whose headers came in
// time but whose body stalls is cut at the adaptive timeout too, and the
// read reports the *TimeoutError.
func TestAdaptiveTimeoutCutsABodyThatStalls(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if n.Add(1) <= 20 {
			fmt.Fprint(w, "<html><body>ok</body></html>")
			return
		}
		w.Header().Set("Content-Length", "100000")
		fmt.Fprint(w, "<html><body>")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	p := breaker.Standard()
	p.Name = "cut"
	p.TimeoutMultiple, p.TimeoutFloor, p.TimeoutAfter = 4, 200*time.Millisecond, 20
	var last observe.Attempt
	b := newBreaker(t, breaker.Config{Profile: p, OnAttempt: func(a observe.Attempt) { last = a }})
	c := colly.NewCollector(colly.AllowURLRevisit())
	c.SetRequestTimeout(10 * time.Second)
	b.Register(c)
	for range 20 {
		c.Visit(srv.URL + "/p")
	}
	start := time.Now()
	err := c.Visit(srv.URL + "/p")
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("the stalled body was read for %v; the adaptive 200ms timeout should cut it", el)
	}
	var te *breaker.TimeoutError
	// The 200 ms floor, or a little above it if a loaded machine
	// stretched the healthy answers.
	if err == nil || !errors.As(last.Err, &te) || te.After < 200*time.Millisecond || te.After > time.Second || last.Result.Class != circuit.Degraded {
		t.Fatalf("error %v, attempt %+v: want the body cut by the adaptive timeout (*TimeoutError after 200ms, degraded)", err, last)
	}
}
