package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/examples/shapes/internal/shapetest"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// A listing collector fed by a queue and a detail clone fed with the
// listing's Ctx: tripped on a store degrading mid-crawl, complete after the
// store heals, each product written once across the runs (the product
// pages a run left are scraped by a later one), and a rerun after complete
// sends nothing. Every request that reaches the program's OnError went
// through its OnRequest first, as Colly orders them: no URL's failures
// outnumber its counted attempts.
//
// Each product names the listing page it was found on, from the Ctx the
// listing shared with it, across a resume too.
func TestDetailCloneDegradeHealRerun(t *testing.T) {
	cfg := testserver.Config{Products: 60, PerPage: 10, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}}
	c, out := shapetest.DegradeHealRerun(t, shapetest.Shape{
		Store:       cfg,
		Parallelism: 4,
		Run: func(e shapetest.Env) (int, error) {
			return run(e.Start, e.Ckpt, e.Clock, e.Log, e.Out, e.Report)
		},
		CheckRun: checkAttempts,
	})
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var r struct{ URL, Listing string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		var n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(r.URL, c.Store.URL()), "/products/sku-%d", &n); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		want := c.Store.ListingURL((n-1)/cfg.PerPage + 1)
		if n <= cfg.PerPage {
			want = c.Store.URL() + "/" // the start URL
		}
		if r.Listing != want {
			t.Errorf("%s written with the listing %q, want %q (the page that lists it)", r.URL, r.Listing, want)
		}
	}
}

// checkAttempts checks the program's "not fetched" log lines: every
// OnError the program saw for a URL follows an attempt its OnRequest
// counted, so a URL's failures never outnumber its attempts (an OnError
// run before the program's OnRequest would be a failure with no attempt
// counted for it). The attempt a line reports may be a later one's: on
// the synchronous listing collector, the breaker's re-send of a 429 runs
// inside its own OnError, before the program's, as a Retry of the
// program's would; the program's OnError then reads the Ctx as the
// re-send left it.
func checkAttempts(t *testing.T, run int, log string) {
	t.Helper()
	lines := 0
	for l := range strings.SplitSeq(log, "\n") {
		if !strings.Contains(l, "detailclone: not fetched") {
			continue
		}
		var e struct {
			URL      string `json:"url"`
			Attempt  int    `json:"attempt"`
			Failures int    `json:"failures"`
			Error    string `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("run %d: log line %q: %v", run, l, err)
		}
		lines++
		if e.Failures < 1 || e.Attempt < e.Failures {
			t.Errorf("run %d: OnError for %s (%s) is failure %d after %d attempts: it ran before the program's OnRequest counted the attempt",
				run, e.URL, e.Error, e.Failures, e.Attempt)
		}
	}
	t.Logf("run %d: %d OnError lines checked", run, lines)
}

// A store that answers 429 with Retry-After for two seconds mid-crawl:
// the throttled listing and product pages (the clone's too) are sent again
// after their Retry-After, and the one run is complete with each product
// written once.
func TestDetailCloneThrottledForAWhileIsComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	shapetest.CompleteInOneRun(t, shapetest.Shape{
		Store: testserver.Config{Products: 30, PerPage: 10, Scenario: testserver.Scenario{
			Mode: testserver.Throttle, After: 10, RetryAfter: time.Second, RecoverAfter: 2 * time.Second}},
		Parallelism: 4,
		Run: func(e shapetest.Env) (int, error) {
			return run(e.Start, e.Ckpt, e.Clock, e.Log, e.Out, e.Report)
		},
		CheckRun: checkAttempts,
	})
}
