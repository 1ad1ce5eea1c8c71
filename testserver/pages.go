package testserver

import (
	"strconv"
)

// Selectors that find the store's content. A scraper under test uses these;
// the restyled scenario serves pages on which TitleSelector and PriceSelector
// match nothing.
const (
	TitleSelector       = "div.product h1.title"   // product title on a product page
	PriceSelector       = "div.product span.price" // product price, "$12.34"
	ProductLinkSelector = "a.product-link"         // product links on a listing page
	NextSelector        = "a.next"                 // the next listing page, absent on the last
	RelatedSelector     = "a.related"              // links to related products on a product page
)

// Catalogue defaults.
const (
	// DefaultProducts is the number of products when Catalog.Products or
	// Config.Products is zero.
	DefaultProducts = 100
	// DefaultPerPage is the number of products per listing page when PerPage
	// is zero or negative.
	DefaultPerPage = 20
	// NoProducts as Catalog.Products or Config.Products makes a store with no
	// products: its listing page renders an empty ul.products and every
	// product URL answers 404.
	NoProducts = -1
)

// Catalog is the shape of a store's content: how many products it sells and
// how many a listing page shows. Every page is a pure function of the catalogue
// and the page number, so two runs see byte-identical pages.
//
// The zero Catalog has DefaultProducts products, DefaultPerPage per page.
// Products < 0 (NoProducts) means none.
type Catalog struct {
	Products int // number of products, SKUs 1..Products; 0 = DefaultProducts; < 0 = none
	PerPage  int // products per listing page; ≤ 0 = DefaultPerPage
}

// Len returns the number of products after defaults: SKUs run 1..Len().
func (c Catalog) Len() int {
	switch {
	case c.Products == 0:
		return DefaultProducts
	case c.Products < 0:
		return 0
	}
	return c.Products
}

func (c Catalog) perPage() int {
	if c.PerPage <= 0 {
		return DefaultPerPage
	}
	return c.PerPage
}

// ListingPages returns the number of listing pages, at least 1: an empty
// store still has a first listing page, with no products on it.
func (c Catalog) ListingPages() int {
	n, pp := c.Len(), c.perPage()
	if n == 0 {
		return 1
	}
	return (n + pp - 1) / pp
}

// ProductPath returns the path of product n: "/products/sku-N".
func ProductPath(n int) string { return "/products/sku-" + strconv.Itoa(n) }

// ListingPath returns the path of listing page p: "/list/P". Page 1 is also
// served at "/".
func ListingPath(p int) string { return "/list/" + strconv.Itoa(p) }

// SitemapPath is the path of the store's XML sitemap (see Catalog.Sitemap).
const SitemapPath = "/sitemap.xml"

// Title returns product n's title as its page shows it under TitleSelector.
func Title(n int) string {
	r := newRNG(n, streamTitle)
	return adjectives[r.intn(len(adjectives))] + " " +
		materials[r.intn(len(materials))] + " " +
		nouns[r.intn(len(nouns))] + " " + strconv.Itoa(100+r.intn(900))
}

// Price returns product n's price as its page shows it under PriceSelector,
// for example "$12.34".
func Price(n int) string {
	r := newRNG(n, streamPrice)
	cents := 499 + r.intn(50000)
	return "$" + strconv.Itoa(cents/100) + "." + strconv.Itoa(cents/10%10) + strconv.Itoa(cents%10)
}

// ProductPage returns product n's page of the default catalogue (see
// Catalog.ProductPage).
func ProductPage(n int) []byte { return Catalog{}.ProductPage(n) }

// RestyledProductPage returns product n's page of the default catalogue after
// a template change (see Catalog.RestyledProductPage).
func RestyledProductPage(n int) []byte { return Catalog{}.RestyledProductPage(n) }

// ListingPage returns listing page p of the default catalogue (see
// Catalog.ListingPage).
func ListingPage(p int) []byte { return Catalog{}.ListingPage(p) }

// ProductPage returns product n's page, about 38 KB of realistic HTML: the
// title under TitleSelector, the price under PriceSelector, a description, a
// specifications table, reviews, and links to up to four related products
// (RelatedSelector) within the catalogue. It returns nil if n is not in
// 1..Len().
func (c Catalog) ProductPage(n int) []byte { return c.productPage(n, false) }

// RestyledProductPage returns product n's page as a template change leaves
// it: the same size and content, but the product sits in
// <section class="item"> with an <h2 class="name"> and a span.cost, so
// TitleSelector and PriceSelector match nothing. It returns nil if n is not
// in 1..Len().
func (c Catalog) RestyledProductPage(n int) []byte { return c.productPage(n, true) }

// ListingPage returns listing page p (1..ListingPages()): a ul.products with
// a li per product holding an a.product-link to it, and an a.next to page p+1
// on every page but the last. It returns nil if p is out of range.
func (c Catalog) ListingPage(p int) []byte {
	if p < 1 || p > c.ListingPages() {
		return nil
	}
	n, pp := c.Len(), c.perPage()
	first, last := (p-1)*pp+1, min(p*pp, n)
	b := make([]byte, 0, 1024+160*max(0, last-first+1))
	b = append(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>All products, page "...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, " | Breakwater Test Store</title>\n</head>\n<body>\n"...)
	b = appendHeader(b)
	b = append(b, "<main>\n<h1>All products</h1>\n<ul class=\"products\">\n"...)
	for i := first; i <= last; i++ {
		b = append(b, "<li><a class=\"product-link\" href=\""...)
		b = append(b, ProductPath(i)...)
		b = append(b, "\">"...)
		b = append(b, Title(i)...)
		b = append(b, "</a> <span class=\"list-price\">"...)
		b = append(b, Price(i)...)
		b = append(b, "</span></li>\n"...)
	}
	b = append(b, "</ul>\n<nav class=\"pagination\">"...)
	if p > 1 {
		b = append(b, "<a class=\"prev\" href=\""...)
		b = append(b, ListingPath(p-1)...)
		b = append(b, "\">Previous</a> "...)
	}
	if p < c.ListingPages() {
		b = append(b, "<a class=\"next\" href=\""...)
		b = append(b, ListingPath(p+1)...)
		b = append(b, "\">Next</a>"...)
	}
	b = append(b, "</nav>\n</main>\n"...)
	b = appendFooter(b)
	return append(b, "</body>\n</html>\n"...)
}

// Sitemap returns the store's XML sitemap (sitemaps.org): a urlset with a
// url/loc per product, in SKU order, each loc the absolute URL base +
// ProductPath(n), base being the store's URL ("http://127.0.0.1:PORT").
// A store with no products serves an empty urlset.
func (c Catalog) Sitemap(base string) []byte {
	n := c.Len()
	b := make([]byte, 0, 128+(len(base)+48)*n)
	b = append(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"+
		"<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"...)
	for i := 1; i <= n; i++ {
		b = append(b, "<url><loc>"...)
		b = append(b, base...)
		b = append(b, ProductPath(i)...)
		b = append(b, "</loc></url>\n"...)
	}
	return append(b, "</urlset>\n"...)
}

// ConsentShell returns the page a site serves instead of content when a
// consent wall or a broken render gets in the way: a 200 of about 900 bytes
// ("We value your privacy", accept cookies) with no product markup.
func ConsentShell() []byte { return []byte(consentShell) }

// BlockPage returns the page served with 403 when a client is blocked.
func BlockPage() []byte { return []byte(blockPage) }

// NotFoundPage returns the page served with 404.
func NotFoundPage() []byte { return []byte(notFoundPage) }

// productPage renders product n in the normal or the restyled template.
func (c Catalog) productPage(n int, restyled bool) []byte {
	total := c.Len()
	if n < 1 || n > total {
		return nil
	}
	r := newRNG(n, streamPage)
	target := 38400 + r.intn(1024) // 37.5 to 38.5 KiB, like the logs in the seeds
	title, price, sku := Title(n), Price(n), "sku-"+strconv.Itoa(n)

	b := make([]byte, 0, target+2048)
	b = append(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	b = append(b, title...)
	b = append(b, " | Breakwater Test Store</title>\n<meta name=\"description\" content=\""...)
	b = appendSentence(b, &r, 14)
	b = append(b, "\">\n<link rel=\"canonical\" href=\""...)
	b = append(b, ProductPath(n)...)
	b = append(b, "\">\n"...)
	b = append(b, pageStyle...)
	b = append(b, "</head>\n<body>\n"...)
	b = appendHeader(b)
	b = append(b, "<main>\n"...)
	if restyled {
		b = append(b, "<section class=\"item\" data-sku=\""...)
		b = append(b, sku...)
		b = append(b, "\">\n<h2 class=\"name\">"...)
		b = append(b, title...)
		b = append(b, "</h2>\n<span class=\"cost\">"...)
	} else {
		b = append(b, "<div class=\"product\" data-sku=\""...)
		b = append(b, sku...)
		b = append(b, "\">\n<h1 class=\"title\">"...)
		b = append(b, title...)
		b = append(b, "</h1>\n<span class=\"price\">"...)
	}
	b = append(b, price...)
	b = append(b, "</span>\n<span class=\"sku\">"...)
	b = append(b, sku...)
	b = append(b, "</span>\n<span class=\"stock\">"...)
	b = append(b, stock[r.intn(len(stock))]...)
	b = append(b, "</span>\n<div class=\"description\">\n"...)
	for range 3 + r.intn(3) {
		b = append(b, "<p>"...)
		b = appendParagraph(b, &r, 4+r.intn(4))
		b = append(b, "</p>\n"...)
	}
	b = append(b, "</div>\n<table class=\"specs\">\n"...)
	for _, k := range specKeys {
		b = append(b, "<tr><th>"...)
		b = append(b, k...)
		b = append(b, "</th><td>"...)
		b = appendWord(b, &r)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(1+r.intn(99)), 10)
		b = append(b, "</td></tr>\n"...)
	}
	b = append(b, "</table>\n"...)

	// The tail (related products, footer) is fixed before the reviews, so
	// the reviews can fill the page up to its target size.
	tail := make([]byte, 0, 2048)
	if restyled {
		tail = append(tail, "</section>\n"...)
	} else {
		tail = append(tail, "</div>\n"...)
	}
	tail = append(tail, "<aside class=\"related-products\">\n<h2>Related products</h2>\n<ul>\n"...)
	for _, m := range related(n, total, &r) {
		tail = append(tail, "<li><a class=\"related\" href=\""...)
		tail = append(tail, ProductPath(m)...)
		tail = append(tail, "\">"...)
		tail = append(tail, Title(m)...)
		tail = append(tail, "</a></li>\n"...)
	}
	tail = append(tail, "</ul>\n</aside>\n</main>\n"...)
	tail = appendFooter(tail)
	tail = append(tail, "</body>\n</html>\n"...)

	b = append(b, "<section class=\"reviews\">\n<h2>Customer reviews</h2>\n"...)
	const reviewsEnd = "</section>\n"
	for i := 1; len(b)+len(tail)+len(reviewsEnd) < target; i++ {
		b = append(b, "<article class=\"review\"><h3>"...)
		b = appendSentence(b, &r, 3+r.intn(4))
		b = append(b, "</h3><span class=\"rating\">"...)
		b = strconv.AppendInt(b, int64(1+r.intn(5)), 10)
		b = append(b, "/5</span><span class=\"reviewer\">customer "...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "</span><p>"...)
		b = appendParagraph(b, &r, 2+r.intn(5))
		b = append(b, "</p></article>\n"...)
	}
	b = append(b, reviewsEnd...)
	return append(b, tail...)
}

// related picks up to four distinct products other than n in 1..total.
func related(n, total int, r *rng) []int {
	if total < 2 {
		return nil
	}
	want := min(4, total-1)
	out := make([]int, 0, want)
	for len(out) < want {
		m := 1 + r.intn(total)
		if m == n || contains(out, m) {
			continue
		}
		out = append(out, m)
	}
	return out
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func appendHeader(b []byte) []byte {
	return append(b, "<header class=\"site-header\"><a class=\"logo\" href=\"/\">Breakwater Test Store</a>\n"+
		"<nav class=\"site-nav\"><a href=\"/\">Home</a> <a href=\"/list/1\">All products</a> "+
		"<a href=\"/help\">Help</a> <a href=\"/account\">Account</a> <a href=\"/cart\">Cart (0)</a></nav></header>\n"...)
}

func appendFooter(b []byte) []byte {
	return append(b, "<footer class=\"site-footer\"><p>Breakwater Test Store is a local test fixture. "+
		"Prices, products and reviews are generated.</p><p><a href=\"/privacy\">Privacy</a> "+
		"<a href=\"/terms\">Terms</a> <a href=\"/contact\">Contact</a></p></footer>\n"...)
}

func appendWord(b []byte, r *rng) []byte { return append(b, filler[r.intn(len(filler))]...) }

// appendSentence appends words words, capitalised, with no full stop.
func appendSentence(b []byte, r *rng, words int) []byte {
	start := len(b)
	for i := range words {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendWord(b, r)
	}
	if len(b) > start && b[start] >= 'a' && b[start] <= 'z' {
		b[start] -= 'a' - 'A'
	}
	return b
}

func appendParagraph(b []byte, r *rng, sentences int) []byte {
	for i := range sentences {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendSentence(b, r, 6+r.intn(10))
		b = append(b, '.')
	}
	return b
}

// rng is splitmix64: small, fast and the same on every platform, so pages are
// byte-identical everywhere. Each stream gives a value for one purpose.
type rng struct{ s uint64 }

const (
	streamTitle = 1
	streamPrice = 2
	streamPage  = 3
)

func newRNG(n int, stream uint64) rng {
	return rng{s: uint64(n)*0x9E3779B97F4A7C15 ^ stream*0xD1B54A32D192ED03}
}

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

var (
	adjectives = []string{"Sturdy", "Compact", "Classic", "Modern", "Rustic", "Deluxe", "Portable", "Quiet",
		"Bright", "Foldable", "Heavy-duty", "Slim", "Vintage", "Ergonomic", "Weatherproof", "Everyday"}
	materials = []string{"Walnut", "Oak", "Steel", "Bamboo", "Ceramic", "Linen", "Copper", "Glass",
		"Leather", "Cotton", "Aluminium", "Stoneware", "Wool", "Brass", "Cork", "Birch"}
	nouns = []string{"Desk Lamp", "Kettle", "Backpack", "Chair", "Shelf", "Teapot", "Blanket", "Toolbox",
		"Lantern", "Cutting Board", "Water Bottle", "Planter", "Mug", "Clock", "Stool", "Tray"}
	stock    = []string{"In stock", "In stock", "In stock", "Only a few left", "Ships in 2-3 weeks"}
	specKeys = []string{"Brand", "Model", "Colour", "Width", "Height", "Depth", "Weight", "Warranty",
		"Origin", "Finish", "Capacity", "Care"}
	filler = []string{"the", "and", "with", "for", "this", "sturdy", "handle", "finish", "daily", "use",
		"kitchen", "desk", "light", "quality", "solid", "easy", "clean", "well", "made", "feels",
		"sits", "nicely", "arrived", "quickly", "packed", "colour", "matches", "photo", "would", "buy",
		"again", "gift", "small", "large", "price", "worth", "every", "penny", "after", "weeks",
		"still", "works", "perfectly", "recommend", "simple", "design", "material", "smooth", "edge", "corner",
		"weight", "balance", "surface", "shelf", "room", "office", "garden", "travel", "bag", "lid",
		"seal", "warm", "cold", "bright"}
)

const pageStyle = `<style>
body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
.site-header{display:flex;justify-content:space-between;padding:12px 24px;background:#123;color:#fff}
.site-header a{color:#fff;margin-right:12px;text-decoration:none}
main{max-width:960px;margin:0 auto;padding:24px}
.product h1,.item h2{font-size:28px;margin:0 0 8px}
.price,.cost{font-size:22px;font-weight:600;color:#a30}
.specs{border-collapse:collapse;margin:16px 0}.specs th,.specs td{border:1px solid #ddd;padding:4px 8px}
.review{border-top:1px solid #eee;padding:8px 0}.rating{color:#c80;margin-right:8px}
.site-footer{padding:24px;color:#666;font-size:13px}
</style>
`

const consentShell = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Breakwater Test Store</title>
<style>.consent{position:fixed;inset:0;background:rgba(0,0,0,.6)}.box{max-width:420px;margin:15% auto;background:#fff;padding:24px}</style>
</head>
<body>
<div id="app"></div>
<div class="consent" role="dialog" aria-modal="true">
<div class="box">
<h2>We value your privacy</h2>
<p>We and our partners use cookies to store and access information on your device, to measure
audiences and to personalise content. You can accept all cookies or manage your choices.</p>
<button id="accept">Accept all cookies</button>
<button id="manage">Manage preferences</button>
</div>
</div>
<noscript>Please enable JavaScript to continue shopping.</noscript>
<script>document.getElementById("accept").onclick=function(){document.cookie="consent=1";location.reload()}</script>
</body>
</html>
`

const blockPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Access denied</title>
</head>
<body>
<h1>Access denied</h1>
<p>Your request was blocked by our security service because it looked automated.
If you believe this is a mistake, contact the site owner and quote the reference below.</p>
<p class="ref">Reference: 0.7f3a2c18.1700000000.4b1d</p>
</body>
</html>
`

const notFoundPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Page not found</title>
</head>
<body>
<h1>Page not found</h1>
<p>The page you asked for does not exist or is no longer sold.</p>
</body>
</html>
`
