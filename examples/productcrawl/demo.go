package main

import (
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/rs/zerolog"
)

// The demo fleet a run with no start URL crawls: three local stores, each
// its own host. Each listing page links 60 products, so one listing queues
// enough pages for a trip to show; the latency keeps the run a couple of
// seconds long, so the status line has something to show.
const (
	demoProducts = 120
	demoPerPage  = 60
	demoLatency  = 25 * time.Millisecond
	demoDegrade  = 30 // the degrading store answers 503 from its 31st request
	demoConsent  = 20 // the consent store serves 900-byte shells from its 21st
)

// startDemo starts the fleet: a healthy store, one that degrades mid-run
// and one that turns into consent shells mid-run.
func startDemo(log zerolog.Logger) (*testserver.Fleet, error) {
	f, err := testserver.StartFleet([]testserver.Config{
		{Products: demoProducts, PerPage: demoPerPage,
			Scenario: testserver.Scenario{Latency: demoLatency}},
		{Products: demoProducts, PerPage: demoPerPage,
			Scenario: testserver.Scenario{Mode: testserver.Degrade, After: demoDegrade, Latency: demoLatency}},
		{Products: demoProducts, PerPage: demoPerPage,
			Scenario: testserver.Scenario{Mode: testserver.Empty, After: demoConsent, Latency: demoLatency}},
	})
	if err != nil {
		return nil, err
	}
	for i, what := range []string{"is healthy", "degrades to 503s after 30 requests", "serves consent shells after 20 requests"} {
		s := f.Stores[i]
		log.Info().Str("event", "demo_store").Str("url", s.URL()).Str("scenario", s.Scenario().String()).
			Msg("no start URL given: crawling a local test store that " + what)
	}
	return f, nil
}
