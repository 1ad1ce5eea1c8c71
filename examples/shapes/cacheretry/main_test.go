package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/examples/shapes/internal/shapetest"
	"github.com/breakwater-crawl/breakwater/testserver"
)

func shape(cfg testserver.Config) shapetest.Shape {
	return shapetest.Shape{
		Store:       cfg,
		Parallelism: 4,
		Run: func(e shapetest.Env) (int, error) {
			return run(e.Start, e.Ckpt, e.Dir, e.Clock, e.Log, e.Out, e.Report)
		},
	}
}

// A cached scraper with its own retry loop: tripped on a store degrading
// mid-crawl, complete after the store heals, each product written once
// across the runs, and a rerun after complete sends nothing.
func TestCacheRetryDegradeHealRerun(t *testing.T) {
	shapetest.DegradeHealRerun(t, shape(testserver.Config{Products: 60, PerPage: 10,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}}))
}

// (c) The crawl is complete and its cache warm; the checkpoint is deleted
// and the crawl run again: the cache answers every page, the run is
// complete and writes every product once.
func TestCacheRetryWarmCacheWithoutCheckpointIsComplete(t *testing.T) {
	c := shapetest.New(t, shape(testserver.Config{Products: 30, PerPage: 10}))
	first := filepath.Join(t.TempDir(), "products.jsonl")
	if code := c.Run(first); code != 0 {
		t.Fatalf("the first run on a healthy store: exit %d, want 0 (complete)", code)
	}
	c.CheckProducts("the first run", first, c.Want())
	if err := os.Remove(c.Ckpt); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "again.jsonl")
	sent := c.Store.Count()
	if code := c.Run(again); code != 0 {
		t.Errorf("(c) without the checkpoint, with the warm cache: exit %d, want 0 (complete)", code)
	}
	c.CheckProducts("(c) without the checkpoint, with the warm cache", again, c.Want())
	t.Logf("(c) %d requests to the store", c.Store.Count()-sent)
}

// A store that answers 429 with Retry-After for two seconds mid-crawl:
// Colly's cache keeps 429s, yet no throttled answer is served from it; the
// pages are sent again after their Retry-After, and the one run is
// complete with each product written once.
func TestCacheRetryThrottledForAWhileIsComplete(t *testing.T) {
	shapetest.CompleteInOneRun(t, shape(testserver.Config{Products: 30, PerPage: 10, Scenario: testserver.Scenario{
		Mode: testserver.Throttle, After: 10, RetryAfter: time.Second, RecoverAfter: 2 * time.Second}}))
}
