package collyx

import (
	"hash/fnv"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// slowRequestID is RequestID as Colly computes it: the WHATWG parse
// always, then hash/fnv.
func slowRequestID(u string, body []byte) uint64 {
	n := u
	if p, err := urlParser.Parse(u); err == nil {
		n = p.String()
	}
	h := fnv.New64a()
	_, _ = io.WriteString(h, n)
	_, _ = h.Write(body)
	return h.Sum64()
}

// normalURLCases are URLs around every edge of isNormalURL: the ones it
// takes must come out of the parse unchanged; the others may or may not.
var normalURLCases = []string{
	"http://127.0.0.1:8080/products/sku-1",
	"https://shop.example.test/catalogue/category-3/product-0000042.html",
	"http://127.0.0.1:80/x", "https://a.b:443/x", "http://a.b:443/x", "https://a.b:80/x",
	"http://1.2.3/x", "http://1.2.3.4.5/x", "http://a.1/x", "http://a.0x1f/x", "http://0x7f.0.0.1/x",
	"http://192.168.000.1/", "http://192.168.0.01/", "http://256.1.1.1/", "http://255.255.255.255/",
	"http://0.0.0.0/", "http://1.2.3.4./", "http://1.2.3.4:8080/a",
	"http://Example.com/x", "HTTP://example.com/x", "http://example.com", "http://example.com?x",
	"http://example.com/a/./b", "http://example.com/a/../b", "http://example.com/.", "http://example.com/..",
	"http://example.com/a/.", "http://example.com/a/..", "http://example.com/.a/..b/.../a.", "http://example.com/a./b",
	"http://example.com/a?b='c'", "http://example.com/a'b", "http://example.com/a?x=1&y=2",
	"http://example.com/a?", "http://example.com/a?/../b", "http://example.com/a?x=./..",
	"http://xn--nxasmq6b.com/", "http://a-.com/", "http://-a.com/", "http://ab--c.com/", "http://a.com./",
	"http://example.com/~user/!$&()*+,;=:@", "http://example.com/a?b?c/d:@",
	"http://example.com:08080/", "http://example.com:0/", "http://example.com:65535/", "http://example.com:65536/",
	"http://example.com:/", "http://example.com:1a/", "http://a..b/", "http://.a/", "http://example.com//x",
	"http://user:pw@example.com/", "http://example.com/a#frag", "http://example.com/a%2e", "http://example.com/%7e",
	"http://example.com/a b", "http://example.com/a\tb", "http://example.com/a\\b", "http://example.com/a|b",
	"http://example.com/a{b}", "http://example.com/a^b", "http://example.com/a`b", "http://example.com/a\"b",
	"http://example.com/a<b>", "http://example.com/ä", "http://exämple.com/", "http://[::1]:8080/",
	"ftp://example.com/", "ws://example.com/", "file:///etc/passwd", "mailto:a@b.c", "",
	"http://" + strings.Repeat("a", 63) + ".com/", "http://" + strings.Repeat("a", 64) + ".com/",
}

func TestNormalURLTakesOnlyWhatTheParseKeeps(t *testing.T) {
	check := func(u string) {
		t.Helper()
		if got, want := RequestID(u, []byte("b=1")), slowRequestID(u, []byte("b=1")); got != want {
			t.Errorf("RequestID(%q) = %x, want %x (the WHATWG parse gives %q)", u, got, want, normalizeURL(u))
		}
	}
	took := 0
	for _, u := range normalURLCases {
		check(u)
		if isNormalURL(u) {
			took++
		}
	}
	// Random URLs over an alphabet that hits every rule.
	rng := rand.New(rand.NewPCG(1, 2))
	hosts := []string{"a", "b-c", "1", "0", "01", "255", "256", "0x1", "xn--a", "ab--c", "-", "A", "", "é", "z9", "shop", "example"}
	// The first safe of them are the bytes isNormalURL accepts.
	const safe = 22
	bits := []string{"/", ".", "..", "a", "Z", "0", "-", "_", "~", "!", "$", "&", "(", ")", "*", "+", ",", ";", "=", ":", "@", "?",
		"%", "%2e", "#", "'", " ", "\\", "|", "{", "^", "`", "\"", "<", "\t", "é"}
	for range 60000 {
		var b strings.Builder
		b.WriteString([]string{"http://", "https://", "HTTP://", "http:/", "ws://"}[rng.IntN(5)])
		for i := range 1 + rng.IntN(4) {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(hosts[rng.IntN(len(hosts))])
		}
		if rng.IntN(3) == 0 {
			b.WriteString([]string{":80", ":443", ":8080", ":0", ":08", ":65536", ":"}[rng.IntN(7)])
		}
		if rng.IntN(10) > 0 {
			b.WriteByte('/')
		}
		for range rng.IntN(8) {
			if rng.IntN(8) > 0 {
				b.WriteString(bits[rng.IntN(safe)])
			} else {
				b.WriteString(bits[rng.IntN(len(bits))])
			}
		}
		u := b.String()
		check(u)
		if isNormalURL(u) {
			took++
		}
	}
	if took < 1000 {
		t.Errorf("the fast path took only %d URLs; the test no longer exercises it", took)
	}
}

func FuzzRequestIDMatchesColly(f *testing.F) {
	for _, u := range normalURLCases {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if got, want := RequestID(u, nil), slowRequestID(u, nil); got != want {
			t.Errorf("RequestID(%q) = %x, want %x (the WHATWG parse gives %q)", u, got, want, normalizeURL(u))
		}
	})
}

func BenchmarkRequestID(b *testing.B) {
	const u = "http://127.0.0.1:40123/products/sku-1234"
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			RequestID(u, nil)
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			slowRequestID(u, nil)
		}
	})
}
