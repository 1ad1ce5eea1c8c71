package checkpoint_test

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// A resume whose last URL brings nothing new (a page that is gone) ends
// complete: the crawl's work is done, by this run and the ones before it.
// It is not "empty", which says the start had nothing to crawl and sends
// a person to look at the seeds.
func TestResumeThatFinishesTheWorkIsCompleteNotEmpty(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 3, PerPage: 3})
	path := dbPath(t)
	missing := store.URL() + testserver.ProductPath(999)

	run := func(stopBefore string) (outcome.Outcome, int) {
		cp := openCP(t, path)
		b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Observe(b); err != nil {
			t.Fatal(err)
		}
		cr := newCrawler(t, cp, b, 1)
		if _, err := cp.Resume(cr.c); err != nil {
			t.Fatal(err)
		}
		if stopBefore != "" {
			_ = cr.c.Visit(store.URL() + "/")
			cr.c.Wait()
			cr.halt() // stopped before the last URL could leave
			_ = cr.c.Visit(stopBefore)
		}
		cr.c.Wait()
		written := len(cr.products)
		o := outcome.Decide(int64(written), b, cp)
		cp.SetOutcome(o)
		if err := closeCP(cp); err != nil {
			t.Fatal(err)
		}
		return o, written
	}

	o, written := run(missing)
	if o.State != outcome.Tripped || written != 3 {
		t.Fatalf("first run: %v (%s), %d products; want tripped with the missing page left, 3 products", o.State, o.Reason, written)
	}
	o, written = run("")
	if store.CountPath(testserver.ProductPath(999)) != 1 {
		t.Fatalf("the resume did not send the URL left over: %d requests for it", store.CountPath(testserver.ProductPath(999)))
	}
	if o.State != outcome.Complete {
		t.Errorf("resume that finished the crawl (%d new products, the last URL gone): %v (%s); want complete", written, o.State, o.Reason)
	}
}
