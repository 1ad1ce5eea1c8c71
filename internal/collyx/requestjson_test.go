package collyx

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gocolly/colly/v2"
)

// jsonRequest is what MarshalRequest must write: the SerialRequest
// through encoding/json.
func jsonRequest(t testing.TB, r *colly.Request, body []byte) []byte {
	sr := SerialRequest{URL: r.URL.String(), Method: r.Method, Depth: r.Depth, Body: body, ID: r.ID, Host: r.Host}
	if r.Headers != nil {
		sr.Headers = *r.Headers
	}
	if r.Ctx != nil {
		sr.Ctx = map[string]any{}
		r.Ctx.ForEach(func(k string, v any) any { sr.Ctx[k] = v; return nil })
	}
	b, err := json.Marshal(sr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Strings that meet every escape of encoding/json.
var jsonStrings = []string{"", "a", "GET", "Accept", "*/*", `"q"`, `back\slash`, "<b>&amp;</b>", "tab\there", "nl\ncr\r",
	"\b\f\x00\x1f\x7f", "é ü 日本", "\u2028\u2029", "bad \xff utf8 \xe2\x82", "a\u00a0b", "emoji 😀", strings.Repeat("x", 300)}

func TestMarshalRequestWritesWhatEncodingJSONWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func() string { return jsonStrings[rng.IntN(len(jsonStrings))] }
	for i := range 3000 {
		u, _ := url.Parse("https://shop.example.test/p/" + url.PathEscape(pick()) + "?q=" + url.QueryEscape(pick()))
		r := &colly.Request{URL: u, Method: pick(), Depth: rng.IntN(20) - 2, ID: rng.Uint32(), Host: pick()}
		switch rng.IntN(4) {
		case 0: // no headers
		case 1:
			var h http.Header
			r.Headers = &h // a nil map
		default:
			h := http.Header{}
			for range rng.IntN(5) {
				switch rng.IntN(5) {
				case 0:
					h[pick()] = nil
				case 1:
					h[pick()] = []string{}
				default:
					h[pick()] = []string{pick(), pick()}
				}
			}
			r.Headers = &h
		}
		if rng.IntN(5) > 0 {
			r.Ctx = colly.NewContext()
			for range rng.IntN(5) {
				switch rng.IntN(6) {
				case 0:
					r.Ctx.Put(pick(), pick())
				case 1:
					r.Ctx.Put(pick(), rng.IntN(2) == 0)
				case 2:
					r.Ctx.Put(pick(), nil)
				case 3:
					r.Ctx.Put(pick(), rng.IntN(1000)-500)
				case 4:
					r.Ctx.Put(pick(), rng.Float64()*1e6)
				default:
					r.Ctx.Put(pick(), map[string]any{pick(): pick(), pick(): []string{pick()}})
				}
			}
		}
		var body []byte
		switch rng.IntN(3) {
		case 0:
		case 1:
			body = []byte{}
		default:
			body = []byte(pick())
		}
		got, dropped, err := MarshalRequest(r, r.URL.String(), body)
		if err != nil || dropped != nil {
			t.Fatalf("request %d: MarshalRequest dropped %v, %v", i, dropped, err)
		}
		if want := jsonRequest(t, r, body); !bytes.Equal(got, want) {
			t.Fatalf("request %d:\n got %s\nwant %s", i, got, want)
		}
		checkAgrees(t, got) // ParseRequest reads it back as Colly would, or refuses it as Colly would
	}
}

// A Ctx value of another type goes to encoding/json, and one it cannot
// hold is left out and named.
func TestMarshalRequestLeavesOtherCtxValuesToEncodingJSON(t *testing.T) {
	u, _ := url.Parse("http://shop.test/p")
	r := &colly.Request{URL: u, Method: "GET", Ctx: colly.NewContext()}
	r.Ctx.Put("n", 42)
	r.Ctx.Put("s", "x")
	b, dropped, err := MarshalRequest(r, r.URL.String(), nil)
	if err != nil || len(dropped) != 0 || !bytes.Equal(b, jsonRequest(t, r, nil)) {
		t.Fatalf("MarshalRequest = %s, %v, %v; want encoding/json's bytes", b, dropped, err)
	}
	r.Ctx.Put("a", func() {})
	r.Ctx.Put("f", make(chan int))
	b, dropped, err = MarshalRequest(r, r.URL.String(), nil)
	if err != nil || len(dropped) != 2 || dropped[0] != "a" || dropped[1] != "f" || !bytes.Contains(b, []byte(`"Ctx":{"n":42,"s":"x"}`)) {
		t.Fatalf("MarshalRequest = %s, %v, %v; want the func and the channel left out and named", b, dropped, err)
	}
}

func BenchmarkMarshalRequest(b *testing.B) {
	u, _ := url.Parse("http://127.0.0.1:40123/products/sku-1234")
	hdr := http.Header{"Accept": {"*/*"}, "User-Agent": {"colly - https://github.com/gocolly/colly/v2"}}
	r := &colly.Request{URL: u, Method: "GET", Depth: 1, ID: 1234, Headers: &hdr, Ctx: colly.NewContext()}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			MarshalRequest(r, r.URL.String(), nil)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			jsonRequest(b, r, nil)
		}
	})
}
