package validate

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/andybalholm/cascadia"
	"github.com/gocolly/colly/v2"
	"golang.org/x/net/html"
)

// fixedPage answers every request with one HTML page.
type fixedPage []byte

func (b fixedPage) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/html"}}, Body: io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)), Request: req}, nil
}

// The validator tests a Required selector on no node after its first
// match: not when the page is judged from Colly's parse (with or without
// Element checks beside it), nor when it parses the page itself.
func TestARequiredSelectorStopsAtItsFirstMatch(t *testing.T) {
	body := []byte(`<!DOCTYPE html><html><head><title>t</title></head><body><h1>T</h1>` +
		strings.Repeat(`<p class="review">good</p>`, 200) + `</body></html>`)
	ok := func(*colly.HTMLElement) error { return nil }
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"require only", Config{Checks: []Check{Require("p.review")}}},
		{"beside an element check", Config{Checks: []Check{Require("p.review"), Element("h1", ok)}}},
		{"walked for another rule's element check", Config{
			Checks: []Check{Require("p.review", "h1")},
			Pages:  []Page{{Pattern: `/list/`, Checks: []Check{Element("p.review", ok)}}},
		}},
	} {
		for _, registered := range []bool{true, false} {
			name := tc.name + map[bool]string{true: ", from Colly's parse", false: ", parsed by the validator"}[registered]
			t.Run(name, func(t *testing.T) {
				v, err := New(tc.cfg)
				if err != nil {
					t.Fatal(err)
				}
				i := slices.Index(v.selectors, "p.review")
				var calls, matches, after int
				m := v.matchers[i]
				v.matchers[i] = cascadia.Selector(func(n *html.Node) bool {
					calls++
					if matches > 0 {
						after++
					}
					if m(n) {
						matches++
						return true
					}
					return false
				})
				c := colly.NewCollector()
				c.WithTransport(fixedPage(body))
				if registered {
					v.Register(c)
				}
				var verr error
				c.OnScraped(func(r *colly.Response) { verr = v.Check(r) })
				if err := c.Visit("http://shop.test/p/1"); err != nil {
					t.Fatal(err)
				}
				if verr != nil {
					t.Fatal(verr)
				}
				if after > 0 || matches > 1 {
					t.Errorf("the Required selector was tried %d times, on %d nodes after its first match (%d matches)", calls, after, matches)
				}
			})
		}
	}
}
