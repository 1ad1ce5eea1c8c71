package main

import (
	"testing"
	"time"

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

// A store that answers 429 with Retry-After for two seconds mid-crawl:
// the throttled pages are sent again after their Retry-After, and the one
// run is complete with each product written once.
func TestSyncNestedThrottledForAWhileIsComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	shapetest.CompleteInOneRun(t, shapetest.Shape{
		Store: testserver.Config{Products: 30, PerPage: 10, Scenario: testserver.Scenario{
			Mode: testserver.Throttle, After: 10, RetryAfter: time.Second, RecoverAfter: 2 * time.Second}},
		Parallelism: 1,
		Run: func(e shapetest.Env) (int, error) {
			return run(e.Start, e.Ckpt, e.Clock, e.Log, e.Out, e.Report)
		},
	})
}
