package validate_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/breakwater-crawl/breakwater/extensions/validate"
)

// reply is what the in-memory site answers for one path.
type reply struct {
	status int
	ctype  string // "" means text/html; "-" means no Content-Type header
	body   []byte
	err    error // returned by the transport instead of a response
}

// site is an in-memory http.RoundTripper: no sockets, so Colly-level unit
// tests and benchmarks measure Colly and the validator, not the network.
type site struct {
	mu      sync.Mutex
	replies map[string]reply
	hits    map[string]int
}

func newSite() *site { return &site{replies: map[string]reply{}, hits: map[string]int{}} }

func (s *site) set(path string, r reply) *site {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.status == 0 {
		r.status = http.StatusOK
	}
	s.replies[path] = r
	return s
}

func (s *site) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	r, ok := s.replies[req.URL.Path]
	s.hits[req.URL.Path]++
	s.mu.Unlock()
	if !ok {
		r = reply{status: http.StatusNotFound, body: []byte("not found")}
	}
	if r.err != nil {
		return nil, r.err
	}
	h := http.Header{}
	switch r.ctype {
	case "":
		h.Set("Content-Type", "text/html; charset=utf-8")
	case "-":
	default:
		h.Set("Content-Type", r.ctype)
	}
	h.Set("Content-Length", strconv.Itoa(len(r.body)))
	return &http.Response{
		Status: strconv.Itoa(r.status) + " " + http.StatusText(r.status), StatusCode: r.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(r.body)), ContentLength: int64(len(r.body)),
		Request: req,
	}, nil
}

// collector returns a collector fetching from s, with v registered first.
func collector(s *site, v *validate.Validator, opts ...colly.CollectorOption) *colly.Collector {
	c := colly.NewCollector(opts...)
	c.WithTransport(s)
	if v != nil {
		v.Register(c)
	}
	return c
}

// product renders a product page padded to about size bytes.
func product(n, size int) []byte {
	return page(size, fmt.Sprintf(`<div class="product" data-sku="sku-%d"><h1 class="title">Product %d</h1><span class="price">$%d.99</span></div>`, n, n, 10+n))
}

// restyled renders the same content in a template the selectors miss.
func restyled(n, size int) []byte {
	return page(size, fmt.Sprintf(`<section class="item" data-sku="sku-%d"><h2 class="name">Product %d</h2><span class="cost">$%d.99</span></section>`, n, n, 10+n))
}

// listing renders a listing page with links to products.
func listing(size int, ns ...int) []byte {
	var b strings.Builder
	b.WriteString(`<ul class="products">`)
	for _, n := range ns {
		fmt.Fprintf(&b, `<li><a class="product-link" href="/products/sku-%d">Product %d</a></li>`, n, n)
	}
	b.WriteString(`</ul>`)
	return page(size, b.String())
}

// consent renders a ~900-byte consent shell.
func consent() []byte {
	b := []byte(`<!DOCTYPE html><html><head><title>Before you continue</title></head><body><div class="consent"><h2>We value your privacy</h2><p>`)
	for len(b) < 860 {
		b = append(b, "We and our partners use cookies. "...)
	}
	b = append(b, `</p><button>Accept all</button></div></body></html>`...)
	return b
}

func page(size int, main string) []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Store</title></head><body><main>\n")
	b.WriteString(main)
	b.WriteString("\n<section class=\"reviews\">\n")
	for i := 0; b.Len() < size-40; i++ {
		fmt.Fprintf(&b, "<p class=\"review\">Review %d: sturdy, arrived on time, would buy again.</p>\n", i)
	}
	b.WriteString("</section></main></body></html>\n")
	return b.Bytes()
}

// mustNew builds a validator or fails the test.
func mustNew(t testing.TB, c validate.Config) *validate.Validator {
	t.Helper()
	v, err := validate.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// texts returns the reasons' texts.
func texts(v validate.Verdict) []string {
	var out []string
	for _, r := range v.Reasons {
		out = append(out, r.Text)
	}
	return out
}

// verdicts collects the verdict of every scraped page, by path.
type verdicts struct {
	mu sync.Mutex
	m  map[string]validate.Verdict
}

func collect(t testing.TB, c *colly.Collector, v *validate.Validator) *verdicts {
	vs := &verdicts{m: map[string]validate.Verdict{}}
	c.OnScraped(func(r *colly.Response) {
		verdict, ok := v.VerdictOf(r)
		if !ok {
			t.Errorf("no verdict for %s", r.Request.URL)
			return
		}
		vs.mu.Lock()
		vs.m[r.Request.URL.Path] = verdict
		vs.mu.Unlock()
	})
	return vs
}

func (vs *verdicts) get(path string) (validate.Verdict, bool) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	v, ok := vs.m[path]
	return v, ok
}

func itoa(n int) string { return strconv.Itoa(n) }

func bytesOf(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

// parsePrice reads "$12.99".
func parsePrice(text string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(text), "$"), 64)
	if err != nil {
		return 0, fmt.Errorf("price %q is not a number", strings.TrimSpace(text))
	}
	return f, nil
}

// timeout is a transport timeout, as net/http reports one.
type timeout struct{}

func (timeout) Error() string   { return "i/o timeout" }
func (timeout) Timeout() bool   { return true }
func (timeout) Temporary() bool { return true }
