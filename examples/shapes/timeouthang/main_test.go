package main

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/examples/shapes/internal/shapetest"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// A scraper with a request timeout of its own: tripped on a store that
// stops answering mid-crawl (every request hangs), complete after the
// store heals, each product written once across the runs, and a rerun
// after complete sends nothing.
func TestTimeoutHangHangingStoreHealRerun(t *testing.T) {
	shapetest.DegradeHealRerun(t, shapetest.Shape{
		Store:       testserver.Config{Products: 60, PerPage: 10, Scenario: testserver.Scenario{Mode: testserver.Hang, After: 30}},
		Parallelism: 4,
		Run: func(e shapetest.Env) (int, error) {
			return run(e.Start, e.Ckpt, e.Clock, e.Log, e.Out, e.Report)
		},
	})
}
