package breakwater_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// crawl is the README's Usage section, line for line between the usage
// markers (TestReadmeUsageIsWhatTheTestsRun checks): an ordinary Colly
// scraper with Breakwater added, from the start URL to the exit code.
func crawl(start, ckpt string, log zerolog.Logger, out io.Writer) (int, error) {
	// usage:begin
	c := colly.NewCollector(colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}) // yours, if you have one

	// Product pages must be full-size and carry a title; listing pages
	// (small, when they list one product) a product list. A 200 that is
	// neither is not data: it counts against the site.
	v, err := validate.New(
		validate.Page(`/products/`, validate.MinBytes(1024), validate.Require("div.product h1.title")),
		validate.MinBytes(0), validate.Require("ul.products"),
	)
	if err != nil {
		return 64, err // bad configuration: nothing was sent
	}
	b, err := breaker.New(breaker.Standard(), breaker.Config{Logger: log})
	if err != nil {
		return 64, err
	}
	st, err := bolt.Open(ckpt) // the crawl's checkpoint, one file: a rerun resumes what is left
	if err != nil {
		return 64, err // names the file and what to do
	}
	defer st.Close()
	cp, err := checkpoint.New(st)
	if err != nil {
		return 64, err
	}
	defer cp.Close()
	if err := breakwater.Use(c, v, b, cp); err != nil { // in the order they need; cp follows b
		return 64, err
	}

	var mu sync.Mutex
	enc := json.NewEncoder(out)
	var records int64
	c.OnHTML("div.product", func(e *colly.HTMLElement) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(map[string]string{"url": e.Request.URL.String(), "title": e.ChildText("h1.title")})
		records++
	})
	c.OnHTML("a.product-link, a.next", func(e *colly.HTMLElement) {
		if err := e.Request.Visit(e.Attr("href")); err != nil {
			b.NotVisited(e.Request.AbsoluteURL(e.Attr("href")), err) // a cap of Colly's (MaxRequests) left it: the ending names it
		}
	})
	c.OnError(breaker.RetryOnError(3)) // 5xx and timeouts only: never a refusal, a 429, a 404

	if _, err := cp.Resume(c); err != nil { // re-drive what earlier runs left
		return 1, err
	}
	if err := c.Visit(start); err != nil {
		b.NotVisited(start, err) // already done by an earlier run, or a cap of Colly's
	}
	c.Wait()

	o := outcome.Decide(records, v, b, cp) // complete, tripped, empty or error
	cp.SetOutcome(o)
	report.New(o, report.WithBreaker(b), report.WithValidator(v)).Write(os.Stderr, report.Text)
	return o.ExitCode(), nil // 0, 2, 3 or 1: os.Exit(code) in a main
	// usage:end
}

func TestUsageOnAHealthyStoreWithOneProductPerListingIsComplete(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 30, PerPage: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var out bytes.Buffer
	code, err := crawl(store.URL()+"/", filepath.Join(t.TempDir(), "crawl.db"), zerolog.Nop(), &out)
	if err != nil || code != 0 {
		t.Fatalf("exit %d (%v), want 0: a healthy store with one product per listing page", code, err)
	}
	if n := strings.Count(out.String(), "\n"); n != 30 {
		t.Fatalf("%d records, want 30", n)
	}
}

func TestUsageOnADegradingStoreIsTripped(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 200,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 40}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	code, err := crawl(store.URL()+"/", filepath.Join(t.TempDir(), "crawl.db"), zerolog.Nop(), io.Discard)
	if err != nil || code != 2 {
		t.Fatalf("exit %d (%v), want 2 (tripped)", code, err)
	}
	if got, bound := store.SentAfterFailing(), breaker.Standard().Settings().FailuresToTrip()+4-1; got > bound {
		t.Fatalf("%d requests into the degradation, want at most %d", got, bound)
	}
}

// TestReadmeUsageIsWhatTheTestsRun: every line of the README's Usage
// snippet is a line of crawl above, in the same order.
func TestReadmeUsageIsWhatTheTestsRun(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("usage_test.go")
	if err != nil {
		t.Fatal(err)
	}
	block := func(s, begin, end string) []string {
		i, j := strings.Index(s, begin), strings.Index(s, end)
		if i < 0 || j < i {
			t.Fatalf("markers %q … %q not found", begin, end)
		}
		var lines []string
		for _, l := range strings.Split(s[i+len(begin):j], "\n") {
			if l = strings.TrimSpace(l); l != "" && l != "```" && l != "```go" && !strings.HasPrefix(l, "//") {
				lines = append(lines, l)
			}
		}
		return lines
	}
	want := block(string(src), "// usage:begin", "// usage:end")
	got := block(string(readme), "<!-- usage:begin -->", "<!-- usage:end -->")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the README's Usage differs from what the tests run:\nREADME:\n%s\n\ntest:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A store whose listing turned into a consent shell: the run ends tripped
// (work is left) with no circuit opened, and the report says what
// happened — an invalid page — instead of sending the reader to look for
// a trip.
func TestUsageNamesInvalidPagesWhenNothingTripped(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 30, PerPage: 10,
		Scenario: testserver.Scenario{Mode: testserver.Empty}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var code int
	text := captureStderr(t, func() {
		code, err = crawl(store.URL()+"/", filepath.Join(t.TempDir(), "crawl.db"), zerolog.Nop(), io.Discard)
	})
	if err != nil || code != 2 {
		t.Fatalf("exit %d (%v), want 2 (tripped: the listing is left to do)\n%s", code, err, text)
	}
	if !strings.Contains(text, "failed as invalid pages") || strings.Contains(text, "circuit not closed") {
		t.Fatalf("the ending does not name the invalid page, or names a circuit that never opened:\n%s", text)
	}
}

// captureStderr runs f and returns what it wrote to os.Stderr.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	defer func() { os.Stderr = saved }()
	f()
	w.Close()
	return <-done
}
