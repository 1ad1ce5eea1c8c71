package validate

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/gocolly/colly/v2"
)

// BenchmarkRequestPath is the validator's own work for one valid page, as
// its Colly callbacks and a breaker do it, without Colly's parse and walk:
// OnResponse (score status and size, keep the state), the OnHTML call on
// the head, from which the required selector's first match is found,
// OnScraped (fix the verdict), the breaker's Check and the user's
// VerdictOf.
//
//	go test -run '^$' -bench RequestPath -benchmem ./extensions/validate/
func BenchmarkRequestPath(b *testing.B) {
	v, err := New(Config{Checks: []Check{Require("div.product h1.title")}})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`<html><head><title>T</title></head><body><div class="product"><h1 class="title">T</h1></div>` + strings.Repeat("x", 1100) + `</body></html>`)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		b.Fatal(err)
	}
	sel := doc.Find(v.group) // the head, as Colly's walk finds it
	hdr := http.Header{"Content-Type": {"text/html"}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		u, _ := url.Parse("http://shop-" + strconv.Itoa(i%5) + ".test:8080/products/sku-" + strconv.Itoa(i))
		req := &colly.Request{URL: u, Method: "GET", Ctx: colly.NewContext()}
		resp := &colly.Response{Request: req, StatusCode: 200, Headers: &hdr, Body: body}
		v.pages.put(req, newPage(v.rules, resp, 0))
		e := colly.NewHTMLElementFromSelectionNode(resp, sel, sel.Nodes[0], 0)
		if p := v.pages.get(req); p != nil {
			v.matched(p, e)
		}
		if p := v.pages.get(req); p != nil {
			v.finish(p)
		}
		if err := v.Check(resp); err != nil {
			b.Fatal(err)
		}
		if verdict, ok := v.VerdictOf(resp); !ok || !verdict.Valid() {
			b.Fatal("not valid")
		}
		i++
	}
}

// BenchmarkTable is the per-request state table alone for one page, as the
// request path uses it: a new request's state stored once, then found five
// times (OnHTML, OnScraped, the breaker's Check, the user's VerdictOf).
//
//	go test -run '^$' -bench Table -benchmem ./extensions/validate/
func BenchmarkTable(b *testing.B) {
	var t table
	p := &page{}
	b.ReportAllocs()
	for b.Loop() {
		req := &colly.Request{}
		t.put(req, p)
		for range 5 {
			if t.get(req) != p {
				b.Fatal("state not found")
			}
		}
	}
}

// BenchmarkTableParallel is BenchmarkTable from 64 goroutines at once, as
// a broad crawl's visiting goroutines use the table: what its locking
// costs under contention.
//
//	go test -run '^$' -bench TableParallel -benchmem ./extensions/validate/
func BenchmarkTableParallel(b *testing.B) {
	var t table
	p := &page{}
	b.ReportAllocs()
	b.SetParallelism(32) // × GOMAXPROCS goroutines
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := &colly.Request{}
			t.put(req, p)
			for range 5 {
				if t.get(req) != p {
					b.Error("state not found")
					return
				}
			}
		}
	})
}
