package collyx

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gocolly/colly/v2"
)

// errLoaded is what hashProbe's IsVisited returns: Colly got as far as
// asking whether it has seen the request, so it loaded it whole.
var errLoaded = errors.New("colly loaded the request")

// hashProbe is a colly storage.Storage that remembers the ID Colly asks
// about and stops the request there, before anything is sent.
type hashProbe struct {
	asked  bool
	lastID uint64
}

func (p *hashProbe) Init() error                 { return nil }
func (p *hashProbe) Visited(uint64) error        { return nil }
func (p *hashProbe) Cookies(*url.URL) string     { return "" }
func (p *hashProbe) SetCookies(*url.URL, string) {}
func (p *hashProbe) IsVisited(id uint64) (bool, error) {
	p.asked, p.lastID = true, id
	return false, errLoaded
}

// collyLoads reports whether Colly's queue could run the request b: what
// the queue does with an entry (UnmarshalRequest, then Do), stopped at the
// revisit check, which comes after every parse and check of the request
// itself. It returns the ID Colly computed for it.
func collyLoads(t testing.TB, b []byte) (id uint64, loaded bool, why error) {
	p := &hashProbe{}
	c := colly.NewCollector(colly.IgnoreRobotsTxt())
	if err := c.SetStorage(p); err != nil {
		t.Fatal(err)
	}
	r, err := c.UnmarshalRequest(b)
	if err != nil {
		return 0, false, err
	}
	if err := r.Do(); !errors.Is(err, errLoaded) {
		if err == nil {
			t.Fatalf("Colly ran %q without asking its storage", b)
		}
		return 0, false, err
	}
	if !p.asked {
		t.Fatalf("Colly loaded %q without asking its storage", b)
	}
	return p.lastID, true, nil
}

// checkAgrees fails unless ParseRequest accepts b exactly when Colly's
// queue can run it, and then gives the ID Colly gives it.
func checkAgrees(t testing.TB, b []byte) {
	t.Helper()
	_, id, err := ParseRequest(b)
	want, loaded, why := collyLoads(t, b)
	switch {
	case err == nil && !loaded:
		t.Fatalf("ParseRequest accepted %q, which Colly cannot load (%v)", b, why)
	case err != nil && loaded:
		t.Fatalf("ParseRequest refused %q, which Colly loads: %v", b, err)
	case err == nil && id != want:
		t.Fatalf("ParseRequest gave %q ID %x, Colly %x", b, id, want)
	}
}

// requestSeeds are requests as MarshalRequest writes them, and edges of
// what Colly loads. The corpus in testdata/fuzz holds the inputs on which
// the two once disagreed.
func requestSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, u := range []string{"http://127.0.0.1:8080/p/1", "https://shop.example.test/a?b=c#d", "http://bücher.example/",
		"http://0x7f.0.0.1:80/x", "http://example.com/a b", "http://[::1]:8080/"} {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{"Accept": {"*/*"}}
		for _, r := range []*colly.Request{
			{URL: pu, Method: "GET", Depth: 1, ID: 7, Headers: &h, Ctx: colly.NewContext()},
			{URL: pu, Method: "POST", Depth: 2, ID: 8},
		} {
			var body []byte
			if r.Method == "POST" {
				body = []byte("q=1")
			}
			b, _, err := MarshalRequest(r, r.URL.String(), body)
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	}
	for _, s := range []string{
		`{"URL":"http://a.test/"}`, `{"URL":"http://a.test/"} `, `{"URL":"http://a.test/"}{}`, `{"URL":"http://a.test/"}x`,
		`{"URL":" http://a.test/"}`, `{"URL":"http://a.test/ "}`, `{"URL":"\thttp://a.test/"}`, `{"URL":"http://a.test/","Method":"G T"}`,
		`{"URL":"http://a.test/","Method":""}`, `{"URL":"http://a.test/","ID":-1}`, `{"URL":""}`, `{"URL":"/relative"}`,
		`{"URL":"mailto:a@b.c"}`, `{"URL":"http://a.test:99999/"}`, `{"URL":"http://%zz/"}`, `{"URL":"http:// a.test/"}`,
		`{"URL":"http://a.test/","Body":"cT0x","Ctx":{"n":1,"s":"x"},"Headers":{"A":["b"]}}`, `null`, `[]`, ``,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

func TestParseRequestAgreesWithColly(t *testing.T) {
	for i, b := range requestSeeds(t) {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkAgrees(t, b) })
	}
}

// FuzzRequestJSONAgreesWithColly checks that a queue on ParseRequest
// accepts a request exactly when Colly's queue could run it: a request it
// accepts and Colly drops would stay pending for ever, one it refuses and
// Colly runs would be lost. Run it with
//
//	go test -run '^$' -fuzz FuzzRequestJSONAgreesWithColly -fuzztime 60s ./internal/collyx/
func FuzzRequestJSONAgreesWithColly(f *testing.F) {
	for _, b := range requestSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 || strings.Count(string(b), "[")+strings.Count(string(b), "{") > 64 {
			t.Skip("larger than any request MarshalRequest writes")
		}
		checkAgrees(t, b)
	})
}
