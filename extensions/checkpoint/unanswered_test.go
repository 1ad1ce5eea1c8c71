package checkpoint_test

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// A site failing from the first request, whose only URL the user's retry
// loop spends its attempts on before its circuit could trip: the run saw
// the site answer nothing well, so the failures are the site's outage, not
// the page's. The run ends tripped (reschedule), and once the site is back
// a rerun completes with no one running RetryDead.
func TestASiteThatNeverAnsweredWellKillsNoURL(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 3, PerPage: 3, Scenario: testserver.Scenario{Mode: testserver.Degrade}})
	path := dbPath(t)
	run := func() (outcome.Outcome, map[storage.State]int, int) {
		cp := openCP(t, path)
		b, err := breaker.New(breaker.Standard())
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Observe(b); err != nil {
			t.Fatal(err)
		}
		cr := newCrawler(t, cp, b, 1)
		cr.c.OnError(breaker.RetryOnError(3)) // the README's retry loop
		if _, err := cp.Resume(cr.c); err != nil {
			t.Fatal(err)
		}
		_ = cr.c.Visit(store.URL() + "/")
		cr.c.Wait()
		o := outcome.Decide(int64(len(cr.products)), b, cp)
		cp.SetOutcome(o)
		c := counts(t, cp)
		if err := closeCP(cp); err != nil {
			t.Fatal(err)
		}
		return o, c, len(cr.products)
	}
	o, c, _ := run()
	if o.State != outcome.Tripped || c[storage.Dead] != 0 {
		t.Errorf("run 1 into a site that answered nothing well: %v (%s), states %v; want tripped with no URL dead", o.State, o.Reason, c)
	}
	if err := store.SetScenario(testserver.Scenario{}); err != nil {
		t.Fatal(err)
	}
	o, c, n := run()
	if o.State != outcome.Complete || n != 3 || c[storage.Dead] != 0 {
		t.Errorf("run 2, the site back: %v (%s), %d products, states %v; want complete with 3", o.State, o.Reason, n, c)
	}
}
