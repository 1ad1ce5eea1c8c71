package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// BenchmarkPerPage is the overhead scenario's per-page work without the
// network and without concurrency: a synchronous collector, wired by the
// same code as the command (wire), fetches product pages from an
// in-memory transport, one new URL per iteration. Plain Colly, the
// recommended wiring (validator, breaker with pacing, embedded
// checkpoint) and the drop-in (validator and breaker on the collector's
// own LimitRule) run side by side, so their cpu-ns/op (the process's CPU
// time per page, the checkpoint's background commits included) and
// allocs/op differ by what each wiring adds to a page:
//
//	go test -run '^$' -bench PerPage -benchmem -count 6 ./bench/
//
// "product" pages are the scenario's (about 38 KB, Colly's parse is most
// of the cost); "small" pages (about 1.2 KB) leave little but the
// per-request work of Colly and of the extensions.
func BenchmarkPerPage(b *testing.B) {
	const products = 1000
	cat := testserver.Catalog{Products: products}
	pages := map[string][][]byte{"product": make([][]byte, products), "small": make([][]byte, products)}
	for i := range products {
		pages["product"][i] = cat.ProductPage(i + 1)
		pages["small"][i] = fmt.Appendf(nil, `<!doctype html><html><head><title>Product %d</title></head><body>`+
			`<div class="product"><h1 class="title">%s</h1><span class="price">$%d.99</span></div><!-- %s --></body></html>`,
			i+1, testserver.Title(i+1), 10+i, strings.Repeat("x", 1100))
	}
	for _, kind := range []string{"product", "small"} {
		for _, k := range []client{plain, breakwater, dropin} {
			b.Run(kind+"/"+k.String(), func(b *testing.B) {
				benchPerPage(b, k, memStore{pages: pages[kind]})
			})
		}
	}
}

// memStore serves pages[n-1] at /products/sku-n of any host, in memory.
type memStore struct{ pages [][]byte }

func (s memStore) RoundTrip(req *http.Request) (*http.Response, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(req.URL.Path, productPrefix))
	if err != nil || n < 1 || n > len(s.pages) {
		return &http.Response{StatusCode: 404, Status: "404 Not Found", Header: http.Header{}, Body: http.NoBody, Request: req}, nil
	}
	page := s.pages[n-1]
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Content-Length": {strconv.Itoa(len(page))}},
		Body:          io.NopCloser(bytes.NewReader(page)),
		ContentLength: int64(len(page)), Request: req}, nil
}

func benchPerPage(b *testing.B, k client, store memStore) {
	const hosts = 5
	hs := make([]string, hosts)
	for i := range hs {
		hs[i] = "shop-" + strconv.Itoa(i) + ".test:8080"
	}
	spec := crawlSpec{client: k, timeout: defaultTimeout, limits: perHost, hosts: hs, backoff: time.Millisecond, log: zerolog.Nop()}
	if k == breakwater {
		spec.checkpoint = filepath.Join(b.TempDir(), "perpage.db")
	}
	c := colly.NewCollector()
	c.SetRequestTimeout(spec.timeout)
	c.WithTransport(store)
	saved := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := wire(c, k, &spec, newRetryLoop(ctx, maxRetries, spec.backoff), func(*colly.Request) { saved++ }, spec.log, store)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	n := 0
	cpu0, cpuOK := processCPU()
	for b.Loop() {
		// A new URL every time (the checkpoint and Colly's visited set
		// refuse a second visit): the path cycles over the pages, the
		// query makes it new.
		u := "http://" + hs[n%hosts] + productPrefix + strconv.Itoa(n/hosts%len(store.pages)+1) + "?v=" + strconv.Itoa(n)
		if err := c.Visit(u); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.StopTimer()
	if cpu1, _ := processCPU(); cpuOK {
		// Process CPU, so the checkpoint's background commits count too.
		b.ReportMetric(float64(cpu1-cpu0)/float64(n), "cpu-ns/op")
	}
	if err := w.close(); err != nil {
		b.Fatal(err)
	}
	if saved != n {
		b.Fatalf("saved %d of %d pages", saved, n)
	}
}
