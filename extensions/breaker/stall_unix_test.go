//go:build linux || darwin

package breaker_test

import (
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// stopSelf stops this whole process for d, as a loaded machine, a paused
// VM or a long collection does: a child process sends SIGCONT after d.
func stopSelf(t *testing.T, d time.Duration) {
	pid := strconv.Itoa(os.Getpid())
	cont := exec.Command("sh", "-c", "sleep "+strconv.FormatFloat(d.Seconds(), 'f', 3, 64)+"; kill -CONT "+pid)
	if err := cont.Start(); err != nil {
		t.Errorf("starting the process that resumes this one: %v", err)
		return
	}
	syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	cont.Wait()
}

// A healthy store's latencies, as the crawler measures them, climb while
// the crawler's own process is kept from running (chaos/SEEDS.md,
// 11379924317260629200: a healthy redirecting host opened by the
// aggressive profile's slope on a loaded machine). That is no evidence of
// the site: the slope leaves out what the process lived through stopped.
func TestSlopeIgnoresTheCrawlersOwnStalls(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	const warm, products = 40, 60
	store := startStore(t, testserver.Config{Products: products, Scenario: testserver.Scenario{Latency: time.Millisecond}})
	p := breaker.Aggressive()
	p.TimeoutMultiple, p.TimeoutFloor, p.TimeoutAfter = 0, 0, 0
	var tr transitions
	var warned atomic.Bool
	b := newBreaker(t, breaker.Config{Profile: p, OnTransition: tr.hook,
		OnDegrading: func(string, time.Duration, time.Duration) { warned.Store(true) }})
	var stalling atomic.Bool
	var stops atomic.Int64
	c := colly.NewCollector() // synchronous: one request in flight, always
	// Each request after the warm-up is in flight while the process stops.
	c.WithTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if stalling.Load() {
			stopSelf(t, 150*time.Millisecond)
			stops.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	}))
	var collected atomic.Int64
	c.OnResponse(func(*colly.Response) { collected.Add(1) })
	b.Register(c)
	for i := 1; i <= products; i++ {
		stalling.Store(i > warm)
		c.Visit(store.ProductURL(i))
	}
	n := stops.Load()
	reasons := tr.reasons()
	t.Logf("process stopped %d times for 150 ms; collected %d of %d; store received %d; warned %v; transitions %v", n, collected.Load(), products, store.Count(), warned.Load(), reasons)
	if len(reasons) != 0 || b.State(store.Host()) != circuit.Closed {
		t.Errorf("transitions %v, state %s: the crawler's own stalls opened a healthy store's circuit", reasons, b.State(store.Host()))
	}
	if warned.Load() {
		t.Errorf("a degrading warning for a store that answered every page in 1 ms")
	}
	if collected.Load() != products || store.Count() != products {
		t.Errorf("collected %d pages, the store received %d requests; want all %d, each once", collected.Load(), store.Count(), products)
	}
	if n < 12 {
		t.Errorf("the process was stopped %d times: too few to move the slope's median; the test proves nothing", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
