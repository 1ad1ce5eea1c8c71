package main

import (
	"context"
	"fmt"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// crawlSpec is one client's run over a list of URLs.
type crawlSpec struct {
	client  client
	urls    []string      // queued up front, in this order
	timeout time.Duration // the collector's request timeout
	limits  limits        // the baselines' LimitRules
	hosts   []string      // the store hosts, for perHost limits

	// backoff is the retry loop's first wait (1 s ÷ scale).
	backoff time.Duration

	// checkpoint is the embedded checkpoint's file for Breakwater, "" none.
	checkpoint string

	// watch lists hosts whose pages must all be saved (watchPages each);
	// the time they all are is crawlStats.watchDone. With stopOnWatch the
	// run stops then.
	watch       []string
	watchPages  int
	stopOnWatch bool

	// cap bounds the run: at cap it is stopped and reported cut.
	cap time.Duration

	log zerolog.Logger
}

// crawlStats is what a run measured on the client side.
type crawlStats struct {
	wall      time.Duration
	watchDone time.Duration // 0 if the watched hosts were never all saved
	saved     int
	cut       bool
	w         *wiring
}

// harness is what wraps one collector: it stops the run on demand
// (a gate registered before every client's callbacks, and the collector's
// context), and counts what the user's page callback saved.
type harness struct {
	ctx      context.Context
	cancel   context.CancelFunc
	stopping atomic.Bool
	start    time.Time
	spec     *crawlSpec

	mu           sync.Mutex
	saved        map[string]struct{}
	watched      map[string]bool
	watchedSaved int
	watchDone    time.Duration
}

func (r *harness) stop() {
	r.stopping.Store(true)
	r.cancel()
}

// gate drops every request once the run is stopping: in OnRequest for
// requests not yet sent and OnRequestHeaders for those that waited for a
// slot.
func (r *harness) gate(req *colly.Request) {
	if r.stopping.Load() && !req.IsAbort() {
		req.Abort()
	}
}

// save records one saved page.
func (r *harness) save(req *colly.Request) {
	u := req.URL.String()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.saved[u]; dup {
		return
	}
	r.saved[u] = struct{}{}
	if !r.watched[req.URL.Host] {
		return
	}
	r.watchedSaved++
	if r.watchedSaved == len(r.spec.watch)*r.spec.watchPages && r.watchDone == 0 {
		r.watchDone = time.Since(r.start)
		if r.spec.stopOnWatch {
			go r.stop()
		}
	}
}

// crawl runs one client over spec.urls and waits until it is done, it is
// stopped, or the cap is reached.
func crawl(spec crawlSpec) (crawlStats, error) {
	// Every goroutine the run starts (Colly's, the transport's, the
	// store's) inherits the label, so that a -cpuprofile splits by
	// client: go tool pprof -tagfocus client=breakwater.
	labelled := pprof.WithLabels(context.Background(), pprof.Labels("client", spec.client.String()))
	pprof.SetGoroutineLabels(labelled)
	serverLabels.Store(&labelled)
	defer pprof.SetGoroutineLabels(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &harness{ctx: ctx, cancel: cancel, spec: &spec, saved: make(map[string]struct{}), watched: make(map[string]bool)}
	for _, h := range spec.watch {
		r.watched[h] = true
	}

	c := colly.NewCollector(colly.Async(true), colly.StdlibContext(ctx))
	c.SetRequestTimeout(spec.timeout)
	// A transport of its own per run (http.DefaultTransport's settings),
	// so that no run inherits another's connections.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	c.WithTransport(tr)
	c.OnRequest(r.gate)
	c.OnRequestHeaders(r.gate)

	loop := newRetryLoop(ctx, maxRetries, spec.backoff)
	w, err := wire(c, spec.client, &spec, loop, r.save, spec.log, tr)
	if err != nil {
		return crawlStats{}, err
	}

	var cut atomic.Bool
	r.start = time.Now()
	capTimer := time.AfterFunc(spec.cap, func() {
		cut.Store(true)
		r.stop()
	})
	defer capTimer.Stop()
	for _, u := range spec.urls {
		if err := c.Visit(u); err != nil {
			r.stop()
			c.Wait()
			_ = w.close()
			return crawlStats{}, fmt.Errorf("queue %s: %w", u, err)
		}
	}
	c.Wait()
	wall := time.Since(r.start)
	capTimer.Stop()
	if err := w.close(); err != nil {
		return crawlStats{}, err
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	return crawlStats{wall: wall, watchDone: r.watchDone, saved: len(r.saved), cut: cut.Load(), w: w}, nil
}

// breakerOf describes the circuit of host at the end of a run: its state,
// trips and refusals, from Breakwater or gobreaker.
func (s crawlStats) breakerOf(host string) (state string, trips int, refused int64) {
	switch {
	case s.w.b != nil:
		for _, d := range s.w.b.Stats() {
			if d.Domain == strings.ToLower(host) {
				return d.State.String(), d.Trips, d.Refused
			}
		}
		return "closed", 0, 0
	case s.w.gob != nil:
		return s.w.gob.state(host), 0, s.w.gob.refused.Load()
	}
	return "", 0, 0
}

// retries is how many retries the retry loop issued.
func (s crawlStats) retries() int64 {
	if s.w.loop == nil {
		return 0
	}
	return s.w.loop.issued.Load()
}
