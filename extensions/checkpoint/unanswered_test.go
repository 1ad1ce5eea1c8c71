package checkpoint_test

import (
	"fmt"
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
// a rerun completes with no one running RetryDead. The same when the site
// answered its first pages and failed for the rest of the run: no success
// came after the URL died.
func TestASiteThatNeverAnsweredWellKillsNoURL(t *testing.T) {
	for _, after := range []int{0, 3} {
		t.Run(fmt.Sprintf("after=%d", after), func(t *testing.T) { neverAnsweredWell(t, after) })
	}
}

func neverAnsweredWell(t *testing.T, after int) {
	store := startStore(t, testserver.Config{Products: 4, PerPage: 4, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: after}})
	path := dbPath(t)
	run := func() (outcome.Outcome, map[storage.State]int, int) {
		cp := openCP(t, path)
		b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
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
	o, c, n1 := run()
	if o.State != outcome.Tripped || c[storage.Dead] != 0 {
		t.Errorf("run 1 into a site that answered nothing well: %v (%s), states %v; want tripped with no URL dead", o.State, o.Reason, c)
	}
	if err := store.SetScenario(testserver.Scenario{}); err != nil {
		t.Fatal(err)
	}
	o, c, n2 := run()
	if o.State != outcome.Complete || n1+n2 != 4 || c[storage.Dead] != 0 {
		t.Errorf("run 2, the site back: %v (%s), %d+%d products, states %v; want complete with 4 in all", o.State, o.Reason, n1, n2, c)
	}
}
