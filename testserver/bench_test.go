package testserver

import (
	"io"
	"net/http"
	"testing"
)

// BenchmarkRenderProductPage is the cost of one ~38 KB page without a server.
func BenchmarkRenderProductPage(b *testing.B) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		b.SetBytes(int64(len(ProductPage(1 + n%DefaultProducts))))
	}
}

// BenchmarkServeProductPage is one product page over a loopback keep-alive
// connection, client included.
func BenchmarkServeProductPage(b *testing.B) {
	s, err := Start(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		resp, err := c.Get(s.ProductURL(1 + n%DefaultProducts))
		if err != nil {
			b.Fatal(err)
		}
		m, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		b.SetBytes(m)
	}
}
