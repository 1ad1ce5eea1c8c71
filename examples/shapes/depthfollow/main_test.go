package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/breakwater-crawl/breakwater/examples/shapes/internal/shapetest"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// A depth-limited link follower: tripped on a store degrading mid-crawl,
// complete after the store heals, each product within the depth written
// once across the runs and no page past the depth ever asked for (a
// re-driven page keeps its depth), and a rerun after complete sends
// nothing.
func TestDepthFollowDegradeHealRerun(t *testing.T) {
	cfg := testserver.Config{Products: 60, PerPage: 20, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 15}}
	reach := within(t, testserver.Catalog{Products: cfg.Products, PerPage: cfg.PerPage}, maxDepth)
	var products []string
	for p := range reach {
		if strings.HasPrefix(p, "/products/") {
			products = append(products, p)
		}
	}
	slices.Sort(products)
	if len(products) == 0 || len(products) == cfg.Products {
		t.Fatalf("%d of %d products within depth %d: the depth limits nothing", len(products), cfg.Products, maxDepth)
	}
	c, _ := shapetest.DegradeHealRerun(t, shapetest.Shape{
		Store:       cfg,
		Parallelism: 4,
		Want:        func() []string { return products },
		Run: func(e shapetest.Env) (int, error) {
			return run(e.Start, e.Ckpt, e.Clock, e.Log, e.Out, e.Report)
		},
	})
	var past []string
	for _, h := range c.Store.Requests() {
		if !reach[h.Path] && !slices.Contains(past, h.Path) {
			past = append(past, h.Path)
		}
	}
	if len(past) > 0 {
		t.Errorf("pages past depth %d were asked for: %v", maxDepth, past)
	}
}

// within returns the paths of the pages of the store cat within depth
// (the start page "/" is depth 1), following every a[href] as Colly does.
func within(t *testing.T, cat testserver.Catalog, depth int) map[string]bool {
	t.Helper()
	seen := map[string]bool{"/": true}
	level := []string{"/"}
	for d := 1; d < depth; d++ {
		var next []string
		for _, p := range level {
			for _, l := range links(t, cat, p) {
				if !seen[l] {
					seen[l] = true
					next = append(next, l)
				}
			}
		}
		level = next
	}
	return seen
}

// links returns the same-site paths page p of cat links to.
func links(t *testing.T, cat testserver.Catalog, p string) []string {
	t.Helper()
	var page []byte
	var n int
	switch {
	case p == "/":
		page = cat.ListingPage(1)
	case strings.HasPrefix(p, "/list/"):
		if _, err := fmt.Sscan(strings.TrimPrefix(p, "/list/"), &n); err == nil {
			page = cat.ListingPage(n)
		}
	case strings.HasPrefix(p, "/products/sku-"):
		if _, err := fmt.Sscan(strings.TrimPrefix(p, "/products/sku-"), &n); err == nil {
			page = cat.ProductPage(n)
		}
	}
	if page == nil {
		return nil // a 404 links to nothing
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	doc.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
		if h, _ := a.Attr("href"); strings.HasPrefix(h, "/") {
			out = append(out, h)
		}
	})
	return out
}
