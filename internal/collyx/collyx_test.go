package collyx

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/gocolly/colly/v2"
)

// TestCollyVersionIsTheOneThisPackageReads pins the Colly version whose
// unexported layout this package reads: an upgrade must come here first.
func TestCollyVersionIsTheOneThisPackageReads(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "github.com/gocolly/colly/v2" {
			if f[1] != "v2.3.0" {
				t.Fatalf("colly %s: collyx reads v2.3.0's layout; check each accessor against the new source, then update this pin", f[1])
			}
			return
		}
	}
	t.Fatal("go.mod requires no github.com/gocolly/colly/v2")
}

func TestErrorCallbacksAreFoundInOrder(t *testing.T) {
	c := colly.NewCollector()
	var got []int
	c.OnError(func(*colly.Response, error) { got = append(got, 1) })
	c.OnError(func(*colly.Response, error) { got = append(got, 2) })
	fs, ok := ErrorCallbacks(c)
	if !ok || len(fs) != 2 {
		t.Fatalf("ErrorCallbacks: %d callbacks, found %v; want 2, true", len(fs), ok)
	}
	r := &colly.Request{Ctx: colly.NewContext()}
	want := errors.New("refused")
	var seen []error
	c.OnError(func(resp *colly.Response, err error) {
		if resp.Request != r || resp.Ctx != r.Ctx {
			t.Errorf("the response does not carry the request and its context")
		}
		seen = append(seen, err)
	})
	if !ReportError(c, r, want) {
		t.Fatal("ReportError found no callbacks")
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 2 || len(seen) != 1 || seen[0] != want {
		t.Fatalf("callbacks ran %v and saw %v; want [1 2] and the error once", got, seen)
	}
}

func TestNilCollectorHasNoCallbacks(t *testing.T) {
	if _, ok := ErrorCallbacks(nil); ok {
		t.Fatal("a nil collector reported callbacks")
	}
}

// TestCacheFileIsWhereCollyCaches lets Colly cache a page and finds it
// where CacheFile says, then forgets it.
func TestCacheFileIsWhereCollyCaches(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	dir := t.TempDir()
	c := colly.NewCollector(colly.CacheDir(dir))
	u := srv.URL + "/page?x=1"
	c.Visit(u)
	if _, err := os.Stat(CacheFile(dir, u)); err != nil {
		t.Fatalf("Colly cached the 429 elsewhere: %v", err)
	}
	if err := ForgetCached(dir, u); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(CacheFile(dir, u)); !os.IsNotExist(err) {
		t.Fatalf("still cached: %v", err)
	}
	if err := ForgetCached(dir, u); err != nil {
		t.Fatalf("forgetting what is not cached: %v", err)
	}
}

// TestClientIsTheOneCollySendsWith: the client Client reads is the one a
// transport set through Colly's API is installed on, and a clone shares it.
func TestClientIsTheOneCollySendsWith(t *testing.T) {
	c := colly.NewCollector()
	rt := &http.Transport{}
	c.WithTransport(rt)
	cl, err := Client(c)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Transport != rt {
		t.Fatalf("Client's transport is %T, not the one WithTransport set", cl.Transport)
	}
	if cc, err := Client(c.Clone()); err != nil || cc != cl {
		t.Fatalf("a clone's client: %p, %v; want the collector's %p", cc, err, cl)
	}
	if _, err := Client(nil); err == nil {
		t.Fatal("a nil collector has a client")
	}
}
