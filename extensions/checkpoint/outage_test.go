package checkpoint_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/rs/zerolog"
)

// readmeRun is one run of the README's wiring over a checkpoint: the
// validator, the standard breaker with the checkpoint's hooks, the
// checkpoint last, the user's c.OnError(breaker.RetryOnError(3)) retry
// loop, and the ending decided by outcome.Decide.
type readmeRun struct {
	cp      *checkpoint.Checkpoint
	b       *breaker.Breaker
	o       outcome.Outcome
	records int64
}

// crawlREADME runs the README's wiring over cp. With threads 0 it is a
// synchronous collector following the store's links from start (each
// retry nested in OnError: a URL's attempts go out back to back); with
// threads > 0, Colly's queue over cp.QueueStorage with that many
// consumers, given urls.
func crawlREADME(t *testing.T, cp *checkpoint.Checkpoint, clk clock.Clock, threads int, start string, urls []string) readmeRun {
	t.Helper()
	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.MinBytes(0), validate.Require("ul.products")},
		Pages: []validate.Page{
			{Pattern: `/products/`, Checks: []validate.Check{validate.MinBytes(1024), validate.Require(testserver.TitleSelector)}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Validator: v, Logger: zerolog.Nop(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Observe(b); err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector()
	c.SetRequestTimeout(5 * time.Second)
	breakwater.Use(c, v, b, cp)
	var records atomic.Int64
	c.OnHTML(testserver.TitleSelector, func(*colly.HTMLElement) { records.Add(1) })
	if threads == 0 {
		c.OnHTML(testserver.ProductLinkSelector+", "+testserver.NextSelector, func(e *colly.HTMLElement) {
			_ = e.Request.Visit(e.Attr("href"))
		})
	}
	c.OnError(breaker.RetryOnError(3))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if threads == 0 {
			if _, err := cp.Resume(c); err != nil {
				t.Error(err)
			}
			if err := c.Visit(start); err != nil {
				b.NotVisited(start, err)
			}
			c.Wait()
			return
		}
		q, err := queue.New(threads, cp.QueueStorage())
		if err != nil {
			t.Error(err)
			return
		}
		for _, u := range urls {
			if err := q.AddURL(u); err != nil {
				t.Error(err)
			}
		}
		if err := q.Run(c); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the crawl did not end within 2 minutes")
	}
	o := outcome.Decide(records.Load(), v, b, cp)
	cp.SetOutcome(o)
	return readmeRun{cp: cp, b: b, o: o, records: records.Load()}
}

// recordsOf reads every record of the checkpoint, by path.
func recordsOf(t *testing.T, cp *checkpoint.Checkpoint) map[string]storage.Record {
	t.Helper()
	out := map[string]storage.Record{}
	err := cp.Store().Scan(func(r storage.Record) error {
		i := strings.Index(r.URL[len("http://"):], "/")
		out[r.URL[len("http://")+i:]] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// exhausted lists the paths the store answered with a failure at least n
// times: URLs whose attempts an outage spent.
func exhausted(s *testserver.Store, n int) []string {
	fails := map[string]int{}
	for _, h := range s.Requests() {
		if h.Status >= 500 {
			fails[h.Path]++
		}
	}
	var out []string
	for p, k := range fails {
		if k >= n {
			out = append(out, p)
		}
	}
	return out
}

// A store that starts answering 503 makes the README's retry loop spend
// all of a few URLs' attempts in the seconds before the circuit trips.
// Their failures are the outage's: the run ends tripped (exit 2, a
// reschedule, no person), with those URLs parked until the circuit may be
// probed, one attempt left; a resume into the site still down (the
// half-open probe failing) kills none of them either; once the site is
// back, a resume fetches them and the crawl is complete.
func TestOutageDoesNotKillURLs(t *testing.T) {
	const n = 60
	store := startStore(t, testserver.Config{Products: n, PerPage: 10, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 20}})
	path := dbPath(t)
	clk := clocktest.NewFake(time.Now())
	max := checkpoint.DefaultMaxAttempts

	// Run 1: the outage starts mid-crawl.
	var logs syncBuffer
	cp := openCP(t, path, checkpoint.Config{Clock: clk, Logger: zerolog.New(&logs)})
	r := crawlREADME(t, cp, clk, 0, store.URL()+"/", nil)
	spent := exhausted(store, max)
	if len(spent) == 0 {
		t.Fatalf("no URL met %d failures before the trip: the scenario tests nothing (%d requests)", max, store.Count())
	}
	if r.o.State != outcome.Tripped || r.o.State.ExitCode() != 2 {
		t.Errorf("run 1: ending %v (exit %d, %q); want tripped (exit 2): an outage is rescheduled, not a person's call",
			r.o.State, r.o.State.ExitCode(), r.o.Reason)
	}
	snap := r.b.Circuits(store.Host())
	if len(snap) != 1 || snap[0].State != circuit.Open {
		t.Fatalf("run 1: circuit %+v; want it open", snap)
	}
	recs := recordsOf(t, cp)
	for p, rec := range recs {
		if rec.State == storage.Dead {
			t.Errorf("run 1: %s dead (%d attempts, %q): its failures were the outage's", p, rec.Attempts, rec.LastError)
		}
	}
	for _, p := range spent {
		rec := recs[p]
		if rec.State != storage.Parked || rec.Attempts != max-1 || !rec.NotBefore.Equal(snap[0].RetryAt) {
			t.Errorf("run 1: %s spent its attempts on 503s: %v, %d attempts, not before %v; want parked until the circuit's RetryAt %v with %d attempts",
				p, rec.State, rec.Attempts, rec.NotBefore, snap[0].RetryAt, max-1)
		}
	}
	var revivals []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil && ev["event"] == "checkpoint_outage_revived" {
			revivals = append(revivals, ev)
		}
	}
	if len(revivals) != 1 || revivals[0]["domain"] != store.Host() || revivals[0]["revived"] != float64(len(spent)) {
		t.Errorf("run 1: revival events %v; want one for %s, %d revived", revivals, store.Host(), len(spent))
	}
	if err := closeCP(cp); err != nil {
		t.Fatal(err)
	}

	// Run 2: past the cooldown, the site still down: the probe fails.
	clk.Set(snap[0].RetryAt.Add(time.Second))
	sent := store.Count()
	cp = openCP(t, path, checkpoint.Config{Clock: clk})
	r = crawlREADME(t, cp, clk, 0, store.URL()+"/", nil)
	if store.Count() == sent {
		t.Fatalf("run 2: nothing was sent: no probe failed, nothing tested")
	}
	if r.o.State != outcome.Tripped || r.o.State.ExitCode() != 2 {
		t.Errorf("run 2: ending %v (exit %d, %q); want tripped (exit 2)", r.o.State, r.o.State.ExitCode(), r.o.Reason)
	}
	snap = r.b.Circuits(store.Host())
	recs = recordsOf(t, cp)
	for p, rec := range recs {
		if rec.State == storage.Dead {
			t.Errorf("run 2: %s dead (%d attempts, %q): a failed probe is the outage's too", p, rec.Attempts, rec.LastError)
		}
	}
	for _, p := range spent {
		if rec := recs[p]; rec.State != storage.Parked || rec.Attempts != max-1 {
			t.Errorf("run 2: %s: %v, %d attempts; want parked again with %d", p, rec.State, rec.Attempts, max-1)
		}
	}
	if err := closeCP(cp); err != nil {
		t.Fatal(err)
	}

	// Run 3: the site is back.
	if err := store.SetScenario(testserver.Scenario{}); err != nil {
		t.Fatal(err)
	}
	if len(snap) == 1 {
		clk.Set(snap[0].RetryAt.Add(time.Second))
	}
	clk.Advance(11 * time.Minute)
	cp = openCP(t, path, checkpoint.Config{Clock: clk})
	r = crawlREADME(t, cp, clk, 0, store.URL()+"/", nil)
	if r.o.State != outcome.Complete || r.o.State.ExitCode() != 0 {
		t.Errorf("run 3: ending %v (exit %d, %q); want complete", r.o.State, r.o.State.ExitCode(), r.o.Reason)
	}
	recs = recordsOf(t, cp)
	for _, p := range spent {
		if rec := recs[p]; rec.State != storage.Done {
			t.Errorf("run 3: %s %v; want done once the site is back", p, rec.State)
		}
	}
	if got := counts(t, cp); got[storage.Done] != len(recs) {
		t.Errorf("run 3: counts %v; want all %d done", got, len(recs))
	}
}

// The same outage under Colly's queue with four consumers: however many
// URLs spend their attempts before the trip, none is dead and the run is
// tripped.
func TestOutageDoesNotKillURLsQueue(t *testing.T) {
	for i := range 3 {
		store := startStore(t, testserver.Config{Products: 100, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 20}})
		cp, err := checkpoint.New(memory.New(), checkpoint.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var urls []string
		for k := 1; k <= store.Catalog().Len(); k++ {
			urls = append(urls, store.ProductURL(k))
		}
		r := crawlREADME(t, cp, nil, 4, "", urls)
		if r.o.State != outcome.Tripped || r.o.State.ExitCode() != 2 {
			t.Errorf("round %d: ending %v (exit %d, %q); want tripped (exit 2)", i, r.o.State, r.o.State.ExitCode(), r.o.Reason)
		}
		for p, rec := range recordsOf(t, cp) {
			if rec.State == storage.Dead {
				t.Errorf("round %d: %s dead (%d attempts, %q)", i, p, rec.Attempts, rec.LastError)
			}
		}
		if err := cp.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A page that fails every attempt on a site that otherwise works is dead
// of failures, and the run is an error (exit 1): the circuit never trips,
// so nothing explains the failures but the page.
func TestFailingPageOnHealthySiteIsDead(t *testing.T) {
	const n = 30
	store := startStore(t, testserver.Config{Products: n})
	bad := testserver.ProductPath(5)
	var mu sync.Mutex
	badHits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == bad {
			mu.Lock()
			badHits++
			mu.Unlock()
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		store.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cp, err := checkpoint.New(memory.New(), checkpoint.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r := crawlREADME(t, cp, nil, 0, srv.URL+"/", nil)
	if s := r.b.Circuits(strings.TrimPrefix(srv.URL, "http://")); len(s) != 1 || s[0].State != circuit.Closed || s[0].Trips != 0 {
		t.Errorf("circuit %+v; want closed, never tripped", s)
	}
	if r.o.State != outcome.Error || r.o.State.ExitCode() != 1 || !strings.Contains(r.o.Reason, "dead of failures") {
		t.Errorf("ending %v (exit %d, %q); want error (exit 1): URLs dead of failures", r.o.State, r.o.State.ExitCode(), r.o.Reason)
	}
	recs := recordsOf(t, cp)
	if rec := recs[bad]; rec.State != storage.Dead || rec.Attempts < checkpoint.DefaultMaxAttempts || !strings.Contains(rec.LastError, "HTTP 500") {
		t.Errorf("%s (%d hits): %v, %d attempts, %q; want dead of its 500s", bad, badHits, rec.State, rec.Attempts, rec.LastError)
	}
	for p, rec := range recs {
		if p != bad && rec.State != storage.Done {
			t.Errorf("%s: %v; want done", p, rec.State)
		}
	}
	if err := cp.Close(); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a log sink the crawl's goroutines may write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
