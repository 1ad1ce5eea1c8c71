package breaker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A crawl whose context is cancelled with a cause (context.WithCancelCause,
// as breakwater.Main does on SIGINT) ends its requests in flight with that
// cause, not context.Canceled: net/http returns the cause. They are the
// crawl's own end, not the site's failures: none counts against it, and
// their URLs are left unfinished as cancelled.
func TestACrawlCancelledWithACauseCountsNoFailureAgainstTheSite(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 20, PerPage: 20,
		Scenario: testserver.Scenario{Latency: 300 * time.Millisecond}})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	c := colly.NewCollector(colly.Async(true), colly.StdlibContext(ctx))
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		t.Fatal(err)
	}
	b.Register(c)
	for i := 1; i <= 6; i++ {
		c.Visit(store.URL() + testserver.ProductPath(i))
	}
	for deadline := time.Now().Add(10 * time.Second); store.Count() < 6; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 6 requests reached the store", store.Count())
		}
	}
	cancel(errors.New("stopped by the user")) // the first answered; the rest in flight
	c.Wait()
	stats := b.Stats()
	if len(stats) != 1 {
		t.Fatalf("%d domains, want 1", len(stats))
	}
	if n := stats[0].Outcomes[circuit.Degraded.String()]; n != 0 {
		t.Errorf("%d requests cut by the crawl's own end counted as degraded against the site, want 0", n)
	}
	ok, cut := stats[0].Outcomes[circuit.Success.String()], stats[0].Outcomes[circuit.Excluded.String()]
	if cut == 0 {
		t.Fatalf("no request was cut in flight (outcomes %v): the test tests nothing", stats[0].Outcomes)
	}
	if u := b.Unfinished(); int64(u.Total) != 6-ok {
		t.Errorf("%d URLs unfinished, want the %d not collected (outcomes %v)", u.Total, 6-ok, stats[0].Outcomes)
	}
}
