package checkpoint_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// A rerun with nothing new says what earlier runs did in the units they
// are known in: the records a run that ended reported, and the URLs a run
// that was killed finished (its records were never told to the
// checkpoint). It never counts listing pages as records, nor a URL twice.
func TestNothingNewSaysWhatEarlierRunsDidWithoutCountingListingsAsRecords(t *testing.T) {
	const products, perPage = 6, 3 // two listing pages, six products
	store := startStore(t, testserver.Config{Products: products, PerPage: perPage})
	path := dbPath(t)

	// run crawls (or resumes) the store; with end it tells the checkpoint
	// how it ended, without it the run is "killed" (no SetOutcome).
	run := func(end bool) (outcome.Outcome, int) {
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
		_ = cr.c.Visit(store.URL() + "/") // already done after run 1: skipped
		cr.c.Wait()
		written := len(cr.products)
		o := outcome.Decide(int64(written), b, cp)
		if end {
			cp.SetOutcome(o)
		}
		if err := closeCP(cp); err != nil {
			t.Fatal(err)
		}
		return o, written
	}

	// Run 1 collects everything and ends: 6 records. Run 2 finds nothing
	// new: its reason names 6 records, not the 8 URLs done.
	if o, n := run(true); o.State != outcome.Complete || n != products {
		t.Fatalf("run 1: %v (%s), %d products; want complete with %d", o.State, o.Reason, n, products)
	}
	o, n := run(true)
	if o.State != outcome.Complete || n != 0 {
		t.Fatalf("run 2: %v (%s), %d products; want complete with none new", o.State, o.Reason, n)
	}
	if want := fmt.Sprintf("%d records by earlier runs", products); !strings.Contains(o.Reason, want) {
		t.Errorf("run 2 after one run that ended with %d records: %q; want it to say %q", products, o.Reason, want)
	}

	// A fresh crawl killed after doing everything (no SetOutcome), then a
	// rerun: its records are unknown; it says how many URLs were done, and
	// calls none of them records.
	path = dbPath(t)
	if _, n := run(false); n != products {
		t.Fatalf("killed run: %d products; want %d", n, products)
	}
	o, _ = run(true)
	if o.State != outcome.Complete {
		t.Fatalf("rerun after a killed run that did everything: %v (%s); want complete", o.State, o.Reason)
	}
	urls := products + products/perPage
	if want := fmt.Sprintf("%d URLs done by earlier runs that were killed", urls); !strings.Contains(o.Reason, want) || strings.Contains(o.Reason, "records by earlier runs") {
		t.Errorf("rerun after a killed run: %q; want it to say %q and to call none of them records", o.Reason, want)
	}
	// And a third run: the run that ended (0 records) and the killed one
	// are counted once each, not the killed run's URLs twice.
	o, _ = run(true)
	if want := fmt.Sprintf("%d URLs done by earlier runs that were killed", urls); !strings.Contains(o.Reason, want) {
		t.Errorf("third run: %q; want it to say %q", o.Reason, want)
	}

	// A run that ended with 6 records, then a killed run that did nothing:
	// 6 records, and no URL counted again for the killed run.
	path = dbPath(t)
	run(true)
	run(false)
	o, _ = run(true)
	if want := fmt.Sprintf("; %d records by earlier runs", products); !strings.HasSuffix(o.Reason, want) {
		t.Errorf("after an ended run and a killed one that did nothing: %q; want it to end %q", o.Reason, want)
	}
}
