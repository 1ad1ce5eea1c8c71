package breaker_test

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// An unregistered clone's request waits for its domain's pace at the
// breaker's transport: that wait is the breaker's, and the request's
// client deadline moves on by it. With a user's own transport (net/http's
// Client then also arms a timer that closes the request's Cancel channel)
// the timer still fired at the old deadline: a request the breaker held
// was cancelled after it left, sometimes once the store had served it,
// and the user's retry loop fetched the page again (chaos/SEEDS.md, seed
// 2993673566452867462: a product of a rate-limited store served whole
// twice). Here the user paces the rate-limited store below its rate with
// a gap of 150 ms; with a LimitRule of 3 per host each product waits about
// three gaps at the transport, past the client's 300 ms timeout, while the
// store answers each in a few milliseconds.
func TestACloneHeldByThePaceUnderAUserTransportIsNotCancelledByTheClientTimeout(t *testing.T) {
	const products = 12
	store := startStore(t, testserver.Config{Products: products, PerPage: products,
		Scenario: testserver.Scenario{Mode: testserver.RateLimit, Status: http.StatusTooManyRequests, Rate: 10, Burst: 2}})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Pacing: breaker.Pacing{MinGap: 150 * time.Millisecond}})
	c := colly.NewCollector(colly.Async(true))
	c.SetRequestTimeout(300 * time.Millisecond)
	// A user's own transport, not net/http's: net/http's Client then
	// enforces its Timeout with a timer closing the request's Cancel
	// channel, not through the request's context alone.
	c.WithTransport(&countingTransport{base: &http.Transport{}})
	if err := c.Limit(&colly.LimitRule{DomainRegexp: "^" + regexp.QuoteMeta(strings.TrimPrefix(store.URL(), "http://")) + "$", Parallelism: 3}); err != nil {
		t.Fatal(err)
	}
	b.Register(c)
	detail := c.Clone() // not registered

	var mu sync.Mutex
	records, tries := map[string]int{}, map[string]int{}
	var errs []string
	detail.OnHTML(testserver.TitleSelector, func(e *colly.HTMLElement) {
		mu.Lock()
		records[e.Request.URL.Path]++
		mu.Unlock()
	})
	detail.OnError(func(r *colly.Response, err error) { // the user's retry loop
		mu.Lock()
		tries[r.Request.URL.String()]++
		n := tries[r.Request.URL.String()]
		if !errors.Is(err, breaker.ErrOpen) {
			errs = append(errs, r.Request.URL.Path+": "+err.Error())
		}
		mu.Unlock()
		if n <= 3 {
			r.Request.Retry()
		}
	})
	c.OnHTML("a.product-link", func(e *colly.HTMLElement) {
		detail.Visit(e.Request.AbsoluteURL(e.Attr("href")))
	})
	c.Visit(store.URL() + "/")
	c.Wait()
	detail.Wait()

	served := map[string]int{}
	for _, h := range store.Requests() {
		if h.Status == http.StatusOK && strings.HasPrefix(h.Path, "/products/") {
			served[h.Path]++
		}
	}
	var twice []string
	for p, n := range served {
		if n > 1 {
			twice = append(twice, p)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(records) != products || len(twice) > 0 || len(errs) > 0 {
		first := ""
		if len(errs) > 0 {
			first = errs[0]
		}
		t.Fatalf("%d of %d products collected; served whole more than once: %v; %d errors on a store the breaker only paced (the first: %s)",
			len(records), products, twice, len(errs), first)
	}
}
