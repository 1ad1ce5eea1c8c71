package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// A crawl of a store that fails from its 31st request on, served at
// /metrics and scraped once.
func Example() {
	store, _ := testserver.Start(testserver.Config{Products: 60,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}})
	defer store.Close()

	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err == nil {
		err = m.Observe(b)
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	srv, err := metrics.Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		fmt.Println(err)
		return
	}

	c := colly.NewCollector()
	b.Register(c)
	for i := 1; i <= 60; i++ {
		c.Visit(store.ProductURL(i))
	}

	resp, err := http.Get(srv.URL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(page), "\n") {
		for _, prefix := range []string{"breakwater_breaker_state", "breakwater_breaker_transitions_total",
			"breakwater_refused_total", "breakwater_request_duration_seconds_count",
			`breakwater_outcomes_total{class="success"`, `breakwater_outcomes_total{class="degraded"`} {
			if strings.HasPrefix(line, prefix) {
				fmt.Println(strings.ReplaceAll(line, store.Host(), "shop"))
			}
		}
	}
	// Output:
	// breakwater_breaker_state{domain="shop",state="closed"} 0
	// breakwater_breaker_state{domain="shop",state="half-open"} 0
	// breakwater_breaker_state{domain="shop",state="open"} 1
	// breakwater_breaker_transitions_total{domain="shop",from="closed",reason="failure_rate",to="open"} 1
	// breakwater_outcomes_total{class="degraded",domain="shop"} 10
	// breakwater_outcomes_total{class="success",domain="shop"} 30
	// breakwater_refused_total{domain="shop"} 20
	// breakwater_request_duration_seconds_count{domain="shop"} 40
}
