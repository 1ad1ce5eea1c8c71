package main

import (
	"sync"
	"sync/atomic"

	"github.com/gocolly/colly/v2"
	"github.com/sony/gobreaker/v2"
)

// perHostGobreaker is sony/gobreaker wired into Colly the way a Go user
// does it by hand: a TwoStepCircuitBreaker per host in a map, Allow() in
// OnRequest (abort when refused), done(err) in OnScraped or OnError.
//
// Settings are gobreaker's defaults (trip on the 6th consecutive failure,
// 60 s open, 1 half-open request, counts never cleared while closed) with
// one choice a user makes: a 4xx answer is reported as a success, since the
// site did answer; so a 429 is not a failure to it, as the rate-limit
// scenarios measure. A refused request is aborted in OnRequest, which Colly
// reports to no callback: the URL is simply not fetched.
type perHostGobreaker struct {
	mu      sync.Mutex
	byHost  map[string]*gobreaker.TwoStepCircuitBreaker[struct{}]
	pending sync.Map // *colly.Request → done func(error)
	refused atomic.Int64
}

func newPerHostGobreaker() *perHostGobreaker {
	return &perHostGobreaker{byHost: make(map[string]*gobreaker.TwoStepCircuitBreaker[struct{}])}
}

func (g *perHostGobreaker) breaker(host string) *gobreaker.TwoStepCircuitBreaker[struct{}] {
	g.mu.Lock()
	defer g.mu.Unlock()
	cb, ok := g.byHost[host]
	if !ok {
		cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{Name: host})
		g.byHost[host] = cb
	}
	return cb
}

// Register wires the breakers into c.
func (g *perHostGobreaker) Register(c *colly.Collector) {
	c.OnRequest(func(r *colly.Request) {
		if r.IsAbort() {
			return
		}
		done, err := g.breaker(r.URL.Host).Allow()
		if err != nil {
			g.refused.Add(1)
			r.Abort()
			return
		}
		g.pending.Store(r, done)
	})
	c.OnScraped(func(resp *colly.Response) { g.finish(resp.Request, nil) })
	c.OnError(func(resp *colly.Response, err error) {
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			err = nil // the site answered: not a failure of the site
		}
		g.finish(resp.Request, err)
	})
}

func (g *perHostGobreaker) finish(r *colly.Request, err error) {
	if done, ok := g.pending.LoadAndDelete(r); ok {
		done.(func(error))(err)
	}
}

// state returns the state of host's breaker, "" for a host never seen.
func (g *perHostGobreaker) state(host string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if cb, ok := g.byHost[host]; ok {
		return cb.State().String()
	}
	return ""
}
