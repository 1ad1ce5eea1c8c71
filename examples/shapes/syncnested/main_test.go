package main

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/examples/shapes/internal/shapetest"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// A synchronous scraper whose callbacks visit nested pages: tripped on a
// store degrading mid-crawl, complete after the store heals, each product
// written once across the runs, and a rerun after complete sends nothing.
func TestSyncNestedDegradeHealRerun(t *testing.T) {
	shapetest.DegradeHealRerun(t, shapetest.Shape{
		Store:       testserver.Config{Products: 60, PerPage: 10, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}},
		Parallelism: 1,
		Run: func(e shapetest.Env) (int, error) {
			return run(e.Start, e.Ckpt, e.Clock, e.Log, e.Out, e.Report)
		},
	})
}
