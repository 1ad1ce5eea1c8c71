package validate_test

import (
	"testing"

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
	price := validate.ElementFunc(func(e *colly.HTMLElement) error {
		_, err := parsePrice(e.Text)
		return err
	})
	cases := []struct {
		name string
		opts []validate.Option // nil: no validator
	}{
		{"plain", nil},
		{"validated", []validate.Option{validate.MinBytes(1024), validate.Require(testserver.TitleSelector)}},
		{"validated+price", []validate.Option{validate.MinBytes(1024), validate.Require(testserver.TitleSelector), validate.Element(testserver.PriceSelector, price)}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var v *validate.Validator
			if tc.opts != nil {
				v = mustNew(b, tc.opts...)
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
