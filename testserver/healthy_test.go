package testserver

import (
	"strings"
	"testing"
)

func TestHealthyServesListingAndProductPages(t *testing.T) {
	s := start(t, Config{Products: 45, PerPage: 20})
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL = %q, want loopback", s.URL())
	}

	code, _, body := get(t, s.URL()+"/")
	if code != 200 {
		t.Fatalf("/ = %d, want 200", code)
	}
	if got := strings.Count(string(body), `class="product-link"`); got != 20 {
		t.Errorf("listing 1 has %d product links, want 20", got)
	}
	if !strings.Contains(string(body), `<a class="next" href="/list/2">`) {
		t.Errorf("listing 1 has no a.next to /list/2")
	}
	_, _, last := get(t, s.ListingURL(3))
	if got := strings.Count(string(last), `class="product-link"`); got != 5 {
		t.Errorf("listing 3 has %d product links, want 5", got)
	}
	if strings.Contains(string(last), `class="next"`) {
		t.Errorf("last listing page has an a.next")
	}
	if code, _, _ := get(t, s.ListingURL(4)); code != 404 {
		t.Errorf("/list/4 = %d, want 404", code)
	}

	code, h, page := get(t, s.ProductURL(7))
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("product 7 = %d %q", code, h.Get("Content-Type"))
	}
	if len(page) < 37*1024 || len(page) > 40*1024 {
		t.Errorf("product page is %d bytes, want about 38 KB", len(page))
	}
	if want := `<div class="product" data-sku="sku-7">` + "\n" + `<h1 class="title">` + Title(7) + `</h1>`; !strings.Contains(string(page), want) {
		t.Errorf("product page lacks %q", want)
	}
	if want := `<span class="price">` + Price(7) + `</span>`; !strings.Contains(string(page), want) {
		t.Errorf("product page lacks %q", want)
	}
	if string(page) != string(s.Catalog().ProductPage(7)) {
		t.Errorf("served page differs from Catalog.ProductPage(7)")
	}
	for _, p := range []string{"/products/sku-46", "/products/sku-0", "/products/sku-07", "/nope"} {
		if code, _, _ := get(t, s.URL()+p); code != 404 {
			t.Errorf("%s = %d, want 404", p, code)
		}
	}
	if got := s.Count(); got != 8 {
		t.Errorf("Count = %d, want 8", got)
	}
	if _, seq := s.FailingSince(); seq != 0 {
		t.Errorf("FailingSince seq = %d on a healthy store, want 0", seq)
	}
}

// The sitemap lists every product once, by absolute URL, as XML; it
// follows the scenario like every other page.
func TestSitemapListsEveryProductByAbsoluteURL(t *testing.T) {
	s := start(t, Config{Products: 12, PerPage: 5, Scenario: Scenario{Mode: Degrade, After: 1}})
	code, h, body := get(t, s.URL()+SitemapPath)
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/xml") {
		t.Fatalf("%s = %d %q, want 200 application/xml", SitemapPath, code, h.Get("Content-Type"))
	}
	if string(body) != string(s.Catalog().Sitemap(s.URL())) {
		t.Errorf("served sitemap differs from Catalog.Sitemap")
	}
	if !strings.HasPrefix(string(body), "<?xml") || !strings.Contains(string(body), `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`) {
		t.Errorf("not a sitemaps.org urlset:\n%s", body)
	}
	for n := 1; n <= 12; n++ {
		if got := strings.Count(string(body), "<loc>"+s.ProductURL(n)+"</loc>"); got != 1 {
			t.Errorf("product %d listed %d times, want once", n, got)
		}
	}
	if got := strings.Count(string(body), "<loc>"); got != 12 {
		t.Errorf("%d locs, want 12", got)
	}
	if code, _, _ := get(t, s.URL()+SitemapPath); code != 503 {
		t.Errorf("second %s on a store degrading after 1 = %d, want 503", SitemapPath, code)
	}
	if got := string(Catalog{Products: NoProducts}.Sitemap("http://x")); strings.Contains(got, "<loc>") || !strings.Contains(got, "</urlset>") {
		t.Errorf("an empty store's sitemap is not an empty urlset:\n%s", got)
	}
}
