package breaker_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// checkTitle is a validator that wants a product title on every page: a
// listing page fails it.
type checkTitle struct{}

func (checkTitle) Check(r *colly.Response) error {
	if !strings.Contains(string(r.Body), `class="title"`) {
		return errNoTitle
	}
	return nil
}

var errNoTitle = &noTitle{}

type noTitle struct{}

func (*noTitle) Error() string { return "no product title" }

// An answer of Colly's cache is settled as the site's would be, but for
// the circuit: each reaches OnAttempt once, marked Cached, with its class
// after validation; a valid one counts for the ending (a crawl answered
// wholly from the cache is complete, not empty), an invalid one is listed
// unfinished; no domain counts any as an outcome of its circuit.
func TestAnAnswerFromCollysCacheIsReportedButNotCounted(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 3, PerPage: 3})
	dir := t.TempDir()
	follow := func(c *colly.Collector) {
		c.OnHTML(testserver.ProductLinkSelector, func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	}
	plain := colly.NewCollector(colly.CacheDir(dir))
	follow(plain)
	plain.Visit(store.URL() + "/")
	asked := store.Count()
	if asked != 4 {
		t.Fatalf("filling the cache asked the store %d times, want 4 (a listing, 3 products)", asked)
	}
	for _, tc := range []struct {
		name      string
		validator breaker.Validator
		want      outcome.State
		invalid   int
	}{
		{"no validator", nil, outcome.Complete, 0},
		{"listing invalid", checkTitle{}, outcome.Tripped, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []observe.Attempt
			b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Validator: tc.validator, OnAttempt: func(a observe.Attempt) {
				mu.Lock()
				seen = append(seen, a)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			c := colly.NewCollector(colly.Async(true), colly.CacheDir(dir))
			c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2})
			b.Register(c)
			follow(c)
			c.Visit(store.URL() + "/")
			c.Wait()
			if n := store.Count() - asked; n != 0 {
				t.Fatalf("%d requests reached the store, want 0: the cache holds every page", n)
			}
			invalid := 0
			for _, a := range seen {
				if !a.Cached {
					t.Errorf("%s reported without Cached: %+v", a.Request.URL, a)
				}
				if a.Result.Class == circuit.Invalid {
					invalid++
				}
			}
			if len(seen) != 4 || invalid != tc.invalid {
				t.Errorf("%d attempts reported, %d invalid; want 4, %d", len(seen), invalid, tc.invalid)
			}
			for _, s := range b.Stats() {
				for class, n := range s.Outcomes {
					if n != 0 {
						t.Errorf("%s: the circuit counted %d %s outcomes of the cache's answers, want none", s.Domain, n, class)
					}
				}
			}
			o := outcome.Decide(-1, b)
			if o.State != tc.want || (tc.validator == nil && o.Records != 4) {
				t.Errorf("ended %s with %d records (%s), want %s (4 records without a validator)", o.State, o.Records, o.Reason, tc.want)
			}
			if un := b.Unfinished(); un.Total != tc.invalid {
				t.Errorf("%d URLs listed unfinished (%+v), want %d", un.Total, un.URLs, tc.invalid)
			}
		})
	}
}
