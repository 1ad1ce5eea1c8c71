package testserver

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func parse(t *testing.T, page []byte) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc
}

func TestProductPageMatchesDocumentedSelectors(t *testing.T) {
	c := Catalog{Products: 30}
	for _, n := range []int{1, 2, 17, 30} {
		page := c.ProductPage(n)
		doc := parse(t, page)
		if got := doc.Find(TitleSelector).Text(); got != Title(n) {
			t.Errorf("product %d: %s = %q, want %q", n, TitleSelector, got, Title(n))
		}
		if got := doc.Find(PriceSelector).Text(); got != Price(n) || !strings.HasPrefix(got, "$") {
			t.Errorf("product %d: %s = %q, want %q", n, PriceSelector, got, Price(n))
		}
		rel := doc.Find(RelatedSelector)
		if rel.Length() != 4 {
			t.Errorf("product %d has %d related links, want 4", n, rel.Length())
		}
		rel.Each(func(_ int, a *goquery.Selection) {
			href, _ := a.Attr("href")
			m, err := strconv.Atoi(strings.TrimPrefix(href, "/products/sku-"))
			if err != nil || m < 1 || m > 30 || m == n {
				t.Errorf("product %d: related link %q outside the catalogue", n, href)
			}
		})
		if len(page) < 37*1024 || len(page) > 40*1024 {
			t.Errorf("product %d is %d bytes, want about 38 KB", n, len(page))
		}
		if !bytes.Equal(page, c.ProductPage(n)) {
			t.Errorf("product %d renders differently twice", n)
		}
	}
	if !bytes.Equal(ProductPage(3), Catalog{Products: DefaultProducts}.ProductPage(3)) {
		t.Error("ProductPage is not the default catalogue's page")
	}
	if bytes.Equal(ProductPage(3), ProductPage(4)) || Title(3) == Title(4) && Price(3) == Price(4) {
		t.Error("products 3 and 4 look the same")
	}
	for _, n := range []int{0, -1, 31} {
		if c.ProductPage(n) != nil || c.RestyledProductPage(n) != nil {
			t.Errorf("ProductPage(%d) of 30 products is not nil", n)
		}
	}
}

func TestRestyledPageIsFullSizeWithoutProductSelectors(t *testing.T) {
	page := RestyledProductPage(8)
	doc := parse(t, page)
	if doc.Find(TitleSelector).Length() != 0 || doc.Find(PriceSelector).Length() != 0 {
		t.Error("restyled page still matches the product selectors")
	}
	if got := doc.Find("section.item h2.name").Text(); got != Title(8) {
		t.Errorf("section.item h2.name = %q, want %q", got, Title(8))
	}
	if d := len(page) - len(ProductPage(8)); d < -100 || d > 100 {
		t.Errorf("restyled page is %d bytes off the normal one, want about the same size", d)
	}
}

func TestListingPagesLinkEveryProductOnce(t *testing.T) {
	c := Catalog{Products: 45, PerPage: 20}
	if c.ListingPages() != 3 {
		t.Fatalf("ListingPages = %d, want 3", c.ListingPages())
	}
	seen := map[string]int{}
	next := ListingPath(1)
	for p := 1; next != ""; p++ {
		if next != ListingPath(p) {
			t.Fatalf("page %d: next = %q, want %q", p-1, next, ListingPath(p))
		}
		doc := parse(t, c.ListingPage(p))
		if doc.Find("ul.products").Length() != 1 {
			t.Errorf("page %d has no ul.products", p)
		}
		doc.Find(ProductLinkSelector).Each(func(_ int, a *goquery.Selection) {
			href, _ := a.Attr("href")
			seen[href]++
		})
		next, _ = doc.Find(NextSelector).Attr("href")
	}
	if len(seen) != 45 {
		t.Errorf("listings link %d products, want 45", len(seen))
	}
	for n := 1; n <= 45; n++ {
		if seen[ProductPath(n)] != 1 {
			t.Errorf("%s linked %d times, want once", ProductPath(n), seen[ProductPath(n)])
		}
	}
	if c.ListingPage(0) != nil || c.ListingPage(4) != nil {
		t.Error("out-of-range listing pages are not nil")
	}
}

func TestShellsCarryNoProductMarkup(t *testing.T) {
	for name, page := range map[string][]byte{"consent": ConsentShell(), "block": BlockPage(), "notfound": NotFoundPage()} {
		doc := parse(t, page)
		if doc.Find(TitleSelector).Length() != 0 || doc.Find(ProductLinkSelector).Length() != 0 {
			t.Errorf("%s page has product markup", name)
		}
	}
	if n := len(ConsentShell()); n < 800 || n > 1000 {
		t.Errorf("consent shell is %d bytes, want about 900", n)
	}
	if !strings.Contains(string(ConsentShell()), "We value your privacy") {
		t.Error("consent shell does not ask for consent")
	}
}

func TestCatalogDefaults(t *testing.T) {
	cases := []struct {
		c           Catalog
		len, listed int
	}{
		{Catalog{}, DefaultProducts, DefaultProducts / DefaultPerPage},
		{Catalog{Products: NoProducts}, 0, 1},
		{Catalog{Products: 7, PerPage: -1}, 7, 1},
		{Catalog{Products: 21, PerPage: 10}, 21, 3},
	}
	for _, tc := range cases {
		if tc.c.Len() != tc.len || tc.c.ListingPages() != tc.listed {
			t.Errorf("%+v: Len %d ListingPages %d, want %d %d", tc.c, tc.c.Len(), tc.c.ListingPages(), tc.len, tc.listed)
		}
	}
}
