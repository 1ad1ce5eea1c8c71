package checkpoint_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// URLs whose attempts are spent on failures make the run an error that
// names them by domain and cause, with samples; 404s are dead and fine.
// RetryDead gives the failed ones their attempts back (not the 404s), and
// once fetched the run is complete.
func TestDeadOfFailuresIsAnErrorUntilRetryDead(t *testing.T) {
	const n = 4
	sick := startStore(t, testserver.Config{Products: n, PerPage: n, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 1}})
	gone := startStore(t, testserver.Config{Products: n, PerPage: n, Scenario: testserver.Scenario{Mode: testserver.Gone, After: 1}})
	path := dbPath(t)
	run := func(retryDead bool) (outcome.Evidence, int, map[storage.State]int) {
		cp := openCP(t, path, checkpoint.Config{MaxAttempts: 1})
		cr := newCrawler(t, cp, nil, 1)
		revived := 0
		if retryDead {
			var err error
			if revived, err = cp.RetryDead(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := cp.Resume(cr.c); err != nil {
			t.Fatal(err)
		}
		_ = cr.c.Visit(sick.URL() + "/")
		_ = cr.c.Visit(gone.URL() + "/")
		cr.c.Wait()
		ev, c := cp.Judge(), counts(t, cp)
		if err := closeCP(cp); err != nil {
			t.Fatal(err)
		}
		return ev, revived, c
	}

	ev, _, c := run(false)
	if c[storage.Dead] != 2*n || len(ev.Findings) != 1 {
		t.Fatalf("counts %v, findings %+v; want %d dead and one finding", c, ev.Findings, 2*n)
	}
	f := ev.Findings[0]
	if f.State != outcome.Error || f.Kind != "dead" || len(f.Domains) != 1 || f.Domains[0] != sick.Host() {
		t.Errorf("finding %+v: want an error of kind dead naming %s alone", f, sick.Host())
	}
	if len(f.Dead) != 1 || f.Dead[0].Domain != sick.Host() || f.Dead[0].Cause != "degraded (HTTP 503)" || f.Dead[0].URLs != n ||
		len(f.Dead[0].Samples) == 0 || len(f.Dead[0].Samples) > 3 || !strings.HasPrefix(f.Dead[0].Samples[0], sick.URL()+"/products/") {
		t.Errorf("dead groups %+v: want %d URLs of %s, degraded (HTTP 503), with up to 3 samples", f.Dead, n, sick.Host())
	}
	for _, want := range []string{sick.Host(), "degraded (HTTP 503)", f.Dead[0].Samples[0], "RetryDead"} {
		if !strings.Contains(f.Reason, want) {
			t.Errorf("reason %q does not say %q", f.Reason, want)
		}
	}
	if o := outcome.Decide(1, evidence(ev)); o.State != outcome.Error {
		t.Errorf("Decide: %v, want error", o.State)
	}

	// Resumed as is, nothing is retried: still an error.
	sent := sick.Count()
	if ev, _, _ := run(false); len(ev.Findings) != 1 || ev.Findings[0].Kind != "dead" || sick.Count() != sent {
		t.Errorf("resumed without RetryDead: findings %+v, %d requests; want the same error, nothing sent", ev.Findings, sick.Count()-sent)
	}

	if err := sick.SetScenario(testserver.Scenario{}); err != nil {
		t.Fatal(err)
	}
	ev, revived, c := run(true)
	if revived != n || len(ev.Findings) != 0 || c[storage.Done] != n+2 || c[storage.Dead] != n {
		t.Errorf("with RetryDead: %d revived, findings %+v, counts %v; want %d revived, complete, the 404s alone dead", revived, ev.Findings, c, n)
	}
	for i := 1; i <= n; i++ {
		if got := gone.CountPath(testserver.ProductPath(i)); got != 1 {
			t.Errorf("the 404 page %d was requested %d times, want once: gone is not retried", i, got)
		}
	}
}

// evidence is a Judge that reports what another judged.
type evidence outcome.Evidence

func (e evidence) Judge() outcome.Evidence { return outcome.Evidence(e) }

// An unfinished URL the collector refuses to resume (the user's filters
// changed) is the user's choice: Judge counts it neither unfinished nor
// dead, and it stays in the checkpoint as it was.
func TestResumeRefusedByTheCollectorIsNotUnfinished(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 3, PerPage: 3, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 1}})
	path := dbPath(t)
	cp := openCP(t, path)
	cr := newCrawler(t, cp, nil, 1)
	_ = cr.c.Visit(store.URL() + "/")
	cr.c.Wait()
	if ev := cp.Judge(); len(ev.Findings) != 1 || ev.Findings[0].Kind != "unfinished" {
		t.Fatalf("first run: findings %+v, want the 3 failed products unfinished", ev.Findings)
	}
	if err := closeCP(cp); err != nil {
		t.Fatal(err)
	}

	cp = openCP(t, path)
	cr = newCrawler(t, cp, nil, 1, colly.DisallowedURLFilters(regexp.MustCompile(`/products/`)))
	if _, err := cp.Resume(cr.c); err != nil {
		t.Fatal(err)
	}
	cr.c.Wait()
	if st, ev := cp.Stats(), cp.Judge(); st.Refused != 3 || len(ev.Findings) != 0 {
		t.Errorf("resumed with the products filtered out: %d refused, findings %+v; want 3 refused, no finding", st.Refused, ev.Findings)
	}
	if c := counts(t, cp); c[storage.Failed] != 3 {
		t.Errorf("counts %v: the refused URLs must stay failed, as they were", c)
	}
}
