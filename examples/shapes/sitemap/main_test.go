package main

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/examples/shapes/internal/shapetest"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// A sitemap-driven scraper: tripped on a store that starts serving consent
// shells (200s with no product) mid-crawl,
// complete after the store heals, each product the sitemap lists written
// once across the runs (the sitemap itself fetched once), and a rerun
// after complete sends nothing.
func TestSitemapConsentShellsHealRerun(t *testing.T) {
	c, _ := shapetest.DegradeHealRerun(t, shapetest.Shape{
		Store:       testserver.Config{Products: 60, PerPage: 10, Scenario: testserver.Scenario{Mode: testserver.Empty, After: 30}},
		Start:       testserver.SitemapPath,
		Parallelism: 4,
		Run: func(e shapetest.Env) (int, error) {
			return run(e.Start, e.Ckpt, e.Clock, e.Log, e.Out, e.Report)
		},
	})
	if n := c.Store.CountPath(testserver.SitemapPath); n != 1 {
		t.Errorf("the sitemap was asked for %d times across the runs, want once", n)
	}
}
