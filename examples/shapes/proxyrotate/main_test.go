package main

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/examples/shapes/internal/shapetest"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// A scraper rotating over three local proxies, one of which refuses
// connections from the start: tripped on a store degrading mid-crawl
// (the refusing proxy charged to itself, never to the store), complete
// after the store heals, each product written once across the runs, and
// a rerun after complete sends nothing.
func TestProxyRotateDegradeHealRerun(t *testing.T) {
	proxies, err := testserver.StartProxies([]testserver.ProxyConfig{{}, {},
		{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyRefuse}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxies.Close() })
	shapetest.DegradeHealRerun(t, shapetest.Shape{
		Store:       testserver.Config{Products: 60, PerPage: 10, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}},
		Parallelism: 4,
		Run: func(e shapetest.Env) (int, error) {
			return run(e.Start, proxies.URLs(), e.Ckpt, e.Clock, e.Log, e.Out, e.Report)
		},
	})
	if got := proxies.Forwarded(); got == 0 {
		t.Errorf("the proxies forwarded nothing: the crawl did not go through them")
	}
}
