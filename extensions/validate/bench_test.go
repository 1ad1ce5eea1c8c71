package validate_test

import (
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/testserver"
)

type item struct{ title, price, sku string }

// BenchmarkPage measures one 38 KB product page through a Colly collector
// with the user's usual extraction, without and with the validator, side by
// side. The page comes from an in-memory RoundTripper, so the figures are
// Colly's work and the validator's, not the network's.
//
//	go test -run '^$' -bench BenchmarkPage -benchmem -count 6 ./extensions/validate/
func BenchmarkPage(b *testing.B) {
	body := testserver.ProductPage(1)
	s := newSite().set("/products/sku-1", reply{body: body})
	price := func(e *colly.HTMLElement) error {
		_, err := parsePrice(e.Text)
		return err
	}
	cases := []struct {
		name string
		cfg  *validate.Config // nil: no validator
	}{
		{"plain", nil},
		{"validated", &validate.Config{Checks: []validate.Check{validate.MinBytes(1024), validate.Require(testserver.TitleSelector)}}},
		{"validated+price", &validate.Config{
			Checks: []validate.Check{validate.MinBytes(1024), validate.Require(testserver.TitleSelector), validate.Element(testserver.PriceSelector, price)},
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var v *validate.Validator
			if tc.cfg != nil {
				v = mustNew(b, *tc.cfg)
			}
			c := collector(s, v, colly.AllowURLRevisit())
			var got item
			var kept int
			c.OnHTML("div.product", func(e *colly.HTMLElement) {
				got = item{title: e.ChildText("h1.title"), price: e.ChildText("span.price"), sku: e.ChildText("span.sku")}
			})
			c.OnScraped(func(r *colly.Response) {
				if v != nil {
					if verdict, _ := v.VerdictOf(r); !verdict.Valid() {
						return
					}
				}
				kept++
			})
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Visit("http://shop.test/products/sku-1"); err != nil {
					b.Fatal(err)
				}
			}
			if kept == 0 || got.title != testserver.Title(1) {
				b.Fatalf("kept %d pages, last title %q", kept, got.title)
			}
		})
	}
}

// BenchmarkPageAlternating visits the same page with a plain and a
// validating collector in turn, timing each visit, so that load from other
// processes falls on both alike; it reports each side's ns per page and the
// validator's added cost in percent.
func BenchmarkPageAlternating(b *testing.B) {
	body := testserver.ProductPage(1)
	s := newSite().set("/products/sku-1", reply{body: body})
	v := mustNew(b, validate.Config{Checks: []validate.Check{validate.MinBytes(1024), validate.Require(testserver.TitleSelector)}})
	extract := func(c *colly.Collector, v *validate.Validator) *int {
		var kept int
		c.OnHTML("div.product", func(e *colly.HTMLElement) {
			_ = item{title: e.ChildText("h1.title"), price: e.ChildText("span.price"), sku: e.ChildText("span.sku")}
		})
		c.OnScraped(func(r *colly.Response) {
			if v != nil {
				if verdict, _ := v.VerdictOf(r); !verdict.Valid() {
					return
				}
			}
			kept++
		})
		return &kept
	}
	plain := collector(s, nil, colly.AllowURLRevisit())
	validated := collector(s, v, colly.AllowURLRevisit())
	keptPlain, keptValid := extract(plain, nil), extract(validated, v)
	var tPlain, tValid time.Duration
	visit := func(c *colly.Collector) time.Duration {
		start := time.Now()
		if err := c.Visit("http://shop.test/products/sku-1"); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	n := 0
	for b.Loop() {
		if n%2 == 0 { // alternate which side goes first
			tPlain += visit(plain)
			tValid += visit(validated)
		} else {
			tValid += visit(validated)
			tPlain += visit(plain)
		}
		n++
	}
	if *keptPlain != n || *keptValid != n {
		b.Fatalf("kept %d plain and %d validated pages of %d", *keptPlain, *keptValid, n)
	}
	b.ReportMetric(float64(tPlain.Nanoseconds())/float64(n), "plain-ns/page")
	b.ReportMetric(float64(tValid.Nanoseconds())/float64(n), "validated-ns/page")
	b.ReportMetric(100*(float64(tValid)/float64(tPlain)-1), "added-%")
}
