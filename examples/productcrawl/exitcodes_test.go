package main

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/testserver"
)

func TestExitCompleteOnAHealthyStore(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 30, PerPage: 10})
	r := runCrawl(t, "--report", "json", store.URL()+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (complete)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	rep := r.report(t)
	d := rep.domain(t, store.Host())
	if rep.Outcome.State != "complete" || rep.ExitCode != 0 || rep.Outcome.Records != 30 {
		t.Errorf("outcome %+v exit %d: want complete, 30 records", rep.Outcome, rep.ExitCode)
	}
	if d.State != "closed" || d.OK != 33 || d.Records != 30 || d.Invalid != 0 || d.Failures.Degraded != 0 || d.Refused != 0 || d.Trips != 0 {
		t.Errorf("domain %+v: want closed, 33 pages ok (30 products, 3 listings), 30 records, nothing else", d)
	}
	ps := products(t, filepath.Join(r.dir, "products.jsonl"), store)
	if len(ps) != 30 {
		t.Fatalf("%d products written, want all 30", len(ps))
	}
	for n := 1; n <= 30; n++ {
		if !urls(ps)[store.ProductURL(n)] {
			t.Errorf("product %d missing from the JSON lines", n)
		}
	}
	if store.Count() != 33 {
		t.Errorf("the store received %d requests, want 33: each page once", store.Count())
	}
}

// A store degrading mid-run: the breaker stops the traffic within its
// bound, and every product fetched before the trip is kept.
func TestExitTrippedOnADegradingStore(t *testing.T) {
	for _, tc := range []struct {
		profile     breaker.Profile
		parallelism int
	}{
		{breaker.Standard(), 2},
		{breaker.Conservative(), 3},
	} {
		t.Run(tc.profile.Name, func(t *testing.T) {
			// After leaves a full window of successes before the first
			// failure, so the trip needs exactly FailuresToTrip of them.
			after := max(30, tc.profile.WindowSize)
			store := startStore(t, testserver.Config{Products: 100, PerPage: 100,
				Scenario: testserver.Scenario{Mode: testserver.Degrade, After: after}})
			r := runCrawl(t, "--report", "json", "--profile", tc.profile.Name,
				"--parallelism", itoa(tc.parallelism), store.URL()+"/")
			if r.code != 2 {
				t.Fatalf("exit %d, want 2 (tripped)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			bound := tc.profile.Settings().FailuresToTrip() + tc.parallelism - 1
			if sent := store.SentAfterFailing(); sent > bound || sent < tc.profile.Settings().FailuresToTrip() {
				t.Errorf("%d requests sent into the degradation; want between %d and the bound %d (window × threshold + parallelism − 1)",
					sent, tc.profile.Settings().FailuresToTrip(), bound)
			}
			rep := r.report(t)
			d := rep.domain(t, store.Host())
			if rep.Outcome.State != "tripped" || !slices.Contains(rep.Outcome.Domains, store.Host()) || !rep.hasFinding("circuit_open", store.Host()) {
				t.Errorf("outcome %+v: want tripped, naming %s", rep.Outcome, store.Host())
			}
			if d.State != "open" || d.Trips != 1 || d.Profile != tc.profile.Name ||
				d.OK != int64(store.CountMode(testserver.Healthy)) || d.Failures.Degraded != int64(store.CountMode(testserver.Degrade)) {
				t.Errorf("domain %+v: want open after one trip, ok = %d pages served, degraded = %d 503s served",
					d, store.CountMode(testserver.Healthy), store.CountMode(testserver.Degrade))
			}
			if ok := int64(store.CountMode(testserver.Healthy)); d.Refused == 0 || d.Unfinished == 0 || ok+int64(d.Unfinished) != 101 {
				t.Errorf("refused %d, unfinished %d, served healthy %d: want the 101 pages either served or listed unfinished (refused or failed)", d.Refused, d.Unfinished, ok)
			}
			ps := products(t, filepath.Join(r.dir, "products.jsonl"), store)
			healthy := healthyProducts(store)
			for u := range healthy {
				if !urls(ps)[u] {
					t.Errorf("%s was fetched healthy before the trip but is not in the JSON lines", u)
				}
			}
			if len(ps) != len(healthy) || d.Records != int64(len(ps)) || rep.Outcome.Records != int64(len(ps)) {
				t.Errorf("%d lines, %d healthy product pages, report records %d/%d: want all equal",
					len(ps), len(healthy), d.Records, rep.Outcome.Records)
			}
		})
	}
}

// A store with no products: its one listing page (737 bytes) is below
// the byte floor, so it is invalid, and an invalid page is a failed
// attempt the checkpoint keeps for the next run. Until its attempts are
// spent the run is tripped (reschedule: a consent shell often passes);
// the run that spends the last one has nothing unfinished, collected
// nothing, tripped nothing: empty.
func TestExitEmptyOnAStoreWithNoProducts(t *testing.T) {
	store := startStore(t, testserver.Config{Products: testserver.NoProducts})
	dir := t.TempDir()
	r := runCrawlIn(t, dir, "--report", "json", store.URL()+"/")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (empty)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	rep := r.report(t)
	d := rep.domain(t, store.Host())
	if rep.Outcome.State != "empty" || rep.Outcome.Records != 0 || len(rep.Outcome.Findings) != 0 {
		t.Errorf("outcome %+v: want empty, no records, no findings", rep.Outcome)
	}
	// The listing is short (no products on it) but has its structure: a
	// valid page with nothing on it, not a failure to retry.
	if d.State != "closed" || d.OK != 1 || d.Invalid != 0 || d.Records != 0 {
		t.Errorf("domain %+v: want the one listing page fetched and valid, closed, no records", d)
	}
	if store.Count() != 1 {
		t.Errorf("the store received %d requests, want 1: the listing", store.Count())
	}
	if ps := products(t, filepath.Join(dir, "products.jsonl"), store); len(ps) != 0 {
		t.Errorf("%d products written, want none", len(ps))
	}
	// Resuming a finished empty crawl sends nothing and is still empty.
	r = runCrawlIn(t, dir, "--report", "json", "--resume", store.URL()+"/")
	if r.code != 3 || store.Count() != 1 {
		t.Errorf("resume: exit %d after %d requests, want 3 and nothing sent again", r.code, store.Count())
	}
}

// A listing page served as a consent shell has no listing structure: it
// fails, its URL is kept with attempts left, and once they are spent it is
// a dead letter with its last error, and the run an error: a person
// decides.
func TestInvalidListingIsRetriedThenDead(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 5, Scenario: testserver.Scenario{Mode: testserver.Empty}})
	dir := t.TempDir()
	for run := 1; run <= checkpoint.DefaultMaxAttempts; run++ {
		r := runCrawlIn(t, dir, "--report", "json", "--resume", store.URL()+"/")
		rep := r.report(t)
		if run < checkpoint.DefaultMaxAttempts {
			if r.code != 2 || !rep.hasFinding("unfinished", store.Host()) || rep.Outcome.Records != 0 {
				t.Fatalf("run %d: exit %d, outcome %+v; want 2 (tripped) with the invalid listing unfinished\nstderr:\n%s", run, r.code, rep.Outcome, r.stderr)
			}
			continue
		}
		if r.code != 1 || !rep.hasFinding("dead", store.Host()) {
			t.Fatalf("run %d: exit %d, want 1 (error: URLs dead of failures) once the listing is dead\nstdout:\n%s\nstderr:\n%s", run, r.code, r.stdout, r.stderr)
		}
	}
	if store.Count() != checkpoint.DefaultMaxAttempts {
		t.Errorf("the store received %d requests, want %d: the listing once per run", store.Count(), checkpoint.DefaultMaxAttempts)
	}
	r := runCrawlIn(t, dir, "--dead-letters")
	if r.code != 0 || !strings.Contains(r.stdout, "1 dead URLs") || !strings.Contains(r.stdout, store.URL()+"/") || !strings.Contains(r.stdout, "missing selector") {
		t.Errorf("--dead-letters: exit %d\n%s\nwant 0 and the listing with its last error", r.code, r.stdout)
	}
}

// A template change mid-run: products served before it are kept, none
// after, and the run is an error (a human must look), not a trip.
func TestExitErrorWhenTheTemplateChanged(t *testing.T) {
	const before = 10 // product pages served in the old template
	store := startStore(t, testserver.Config{Products: 40, PerPage: 40,
		Scenario: testserver.Scenario{Mode: testserver.Restyled, After: 1 + before}})
	r := runCrawl(t, "--report", "json", "--parallelism", "1", store.URL()+"/")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (error: selector_broken)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	rep := r.report(t)
	d := rep.domain(t, store.Host())
	if rep.Outcome.State != "error" || !rep.hasFinding("selector_broken", store.Host()) || !slices.Contains(rep.Outcome.Domains, store.Host()) {
		t.Errorf("outcome %+v: want error with a selector_broken finding for %s", rep.Outcome, store.Host())
	}
	if d.SelectorBroken == nil || !slices.Contains(d.SelectorBroken.Selectors, testserver.TitleSelector) || d.SelectorBroken.ValidBefore != 1+before {
		t.Errorf("diagnosis %+v: want %q missing, after %d valid pages", d.SelectorBroken, testserver.TitleSelector, 1+before)
	}
	if d.Invalid != int64(store.CountMode(testserver.Restyled)) || d.Invalid < 3 || d.OK != 1+before {
		t.Errorf("domain %+v: want every restyled page (%d) invalid, %d ok", d, store.CountMode(testserver.Restyled), 1+before)
	}
	ps := products(t, filepath.Join(r.dir, "products.jsonl"), store)
	if len(ps) != before || d.Records != before {
		t.Fatalf("%d products written (report %d), want the %d served before the template changed", len(ps), d.Records, before)
	}
	for u := range healthyProducts(store) {
		if !urls(ps)[u] {
			t.Errorf("%s was served in the old template but is not in the JSON lines", u)
		}
	}
}

func TestExitUsageOnBadFlagsBeforeAnyRequest(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 5})
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--no-such-flag"}, "no-such-flag"},
		{[]string{"--min-bytes", "-1"}, "-min-bytes"},
		{[]string{"--parallelism", "0"}, "-parallelism"},
		{[]string{"--max-pages", "-5"}, "-max-pages"},
		{[]string{"--timeout", "0s"}, "-timeout"},
		{[]string{"--require", "div["}, "not a valid CSS selector"},
		{[]string{"--follow", "a[href"}, "-follow"},
		{[]string{"--field", "title"}, "name=selector"},
		{[]string{"--field", "fetched_at=h1"}, "taken"},
		{[]string{"--profile", "reckless"}, "conservative, standard, aggressive or a profile defined in -profiles"},
		{[]string{"--report", "yaml"}, "-report"},
		{[]string{"--log-level", "loud"}, "-log-level"},
		{[]string{"--product-url", "("}, "-product-url"},
		{[]string{"ftp://example.com/"}, "http or https"},
		{[]string{"--parallelism", "many"}, "-parallelism"},
	} {
		r := runCrawl(t, append(tc.args, store.URL()+"/")...)
		if r.code != 64 {
			t.Errorf("%v: exit %d, want 64 (usage)\nstderr:\n%s", tc.args, r.code, r.stderr)
			continue
		}
		if !strings.Contains(r.stderr, tc.says) || r.stdout != "" {
			t.Errorf("%v: stderr %q, stdout %q: want a message saying %q and no report", tc.args, r.stderr, r.stdout, tc.says)
		}
	}
	if store.Count() != 0 {
		t.Errorf("the store received %d requests from runs with bad flags, want 0", store.Count())
	}
}

func TestHelpExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		r := runCrawl(t, arg)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage: productcrawl") || !strings.Contains(r.stdout, "64  usage") ||
			!strings.Contains(r.stdout, "-profile") {
			t.Errorf("%s: exit %d, stdout:\n%s\nwant 0 and the usage with flags and exit codes", arg, r.code, r.stdout)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
