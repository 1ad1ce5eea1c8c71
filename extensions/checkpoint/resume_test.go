package checkpoint_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// A POST found two levels down fails; resumed in a new process's
// collector, it goes out again as a POST with the same body, at the same
// depth, with its Ctx.
func TestResumeReissuesPOSTWithBodyDepthAndCtx(t *testing.T) {
	var healthy atomic.Bool
	type seen struct {
		method, body, ctype string
	}
	var mu sync.Mutex
	var submits []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body><a class="form" href="/form">form</a></body></html>`)
		case "/form":
			fmt.Fprint(w, `<html><body><form action="/submit"></form></body></html>`)
		case "/submit":
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			submits = append(submits, seen{r.Method, string(b), r.Header.Get("Content-Type")})
			mu.Unlock()
			if !healthy.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, `<html><body>thanks</body></html>`)
		}
	}))
	defer srv.Close()

	path := dbPath(t)
	type got struct {
		depth  int
		origin string
		n      any
	}
	run := func(resume bool) (checkpoint.Stats, []got) {
		cp := openCP(t, path)
		c := colly.NewCollector()
		cp.Register(c)
		var mu sync.Mutex
		var results []got
		c.OnHTML("a.form", func(e *colly.HTMLElement) {
			e.Request.Ctx.Put("origin", "home")
			e.Request.Ctx.Put("n", 7)
			_ = e.Request.Visit(e.Attr("href"))
		})
		c.OnHTML("form", func(e *colly.HTMLElement) {
			_ = e.Request.Post(e.Attr("action"), map[string]string{"sku": "42", "qty": "2"})
		})
		c.OnResponse(func(r *colly.Response) {
			if r.Request.URL.Path == "/submit" {
				mu.Lock()
				results = append(results, got{r.Request.Depth, r.Ctx.Get("origin"), r.Ctx.GetAny("n")})
				mu.Unlock()
			}
		})
		if resume {
			if _, err := cp.Resume(c); err != nil {
				t.Fatal(err)
			}
		}
		_ = c.Visit(srv.URL + "/")
		c.Wait()
		st := cp.Stats()
		if err := closeCP(cp); err != nil {
			t.Fatal(err)
		}
		return st, results
	}
	if _, res := run(false); len(res) != 0 {
		t.Fatalf("the first submit succeeded: %v", res)
	}
	healthy.Store(true)
	st, res := run(true)
	if st.Redriven != 1 || len(res) != 1 {
		t.Fatalf("resume re-drove %d, %d submits answered; want the one failed POST", st.Redriven, len(res))
	}
	if res[0].depth != 3 || res[0].origin != "home" || res[0].n != float64(7) {
		t.Errorf("resumed request: depth %d, ctx origin %q, n %#v; want depth 3, %q, 7 (as float64: JSON)", res[0].depth, res[0].origin, res[0].n, "home")
	}
	if len(submits) != 2 {
		t.Fatalf("%d submits, want 2: %v", len(submits), submits)
	}
	for i, s := range submits {
		if s.method != "POST" || s.body != "qty=2&sku=42" || s.ctype != "application/x-www-form-urlencoded" {
			t.Errorf("submit %d: %+v; want the same POST both times", i+1, s)
		}
	}
	cp := openCP(t, path)
	if c := counts(t, cp); c[storage.Done] != 3 || len(c) != 1 {
		t.Errorf("counts %v, want 3 done", c)
	}
}

// Colly's queue with the checkpoint as its storage, cut off half way
// (every request from the 25th page on aborted: popped from the queue and
// never sent, as a killed process leaves them) and started again by the
// same code, fetches every page exactly once.
func TestCollyQueueIsResumableAsIs(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 60, PerPage: 20})
	path := dbPath(t)
	crawl := func(stopAfter int32) {
		cp := openCP(t, path)
		c := colly.NewCollector()
		var pages atomic.Int32
		c.OnRequest(func(r *colly.Request) {
			if stopAfter > 0 && pages.Load() >= stopAfter {
				r.Abort()
			}
		})
		cp.Register(c)
		q, err := queue.New(2, cp.QueueStorage())
		if err != nil {
			t.Fatal(err)
		}
		c.OnHTML(testserver.ProductLinkSelector+", "+testserver.NextSelector, func(e *colly.HTMLElement) {
			if err := q.AddURL(e.Request.AbsoluteURL(e.Attr("href"))); err != nil {
				t.Error(err)
			}
		})
		c.OnScraped(func(*colly.Response) { pages.Add(1) })
		if err := q.AddURL(store.URL() + "/"); err != nil {
			t.Fatal(err)
		}
		if err := q.Run(c); err != nil {
			t.Fatal(err)
		}
		c.Wait()
		if err := closeCP(cp); err != nil {
			t.Fatal(err)
		}
	}
	crawl(25)
	if n := store.Count(); n >= 63 || n < 25 {
		t.Fatalf("the first run sent %d requests; want it cut off after about 25 of 63", n)
	}
	crawl(0)
	if store.Count() != 63 {
		t.Errorf("%d requests over two runs, want 63: every page once", store.Count())
	}
	if twice := fetchedTwice(store, 60); len(twice) != 0 {
		t.Errorf("fetched twice: %v", twice)
	}
	cp := openCP(t, path)
	if c := counts(t, cp); c[storage.Done] != 63 || len(c) != 1 {
		t.Errorf("counts %v, want 63 done", c)
	}
}

// testProfile trips on a full window of 4 with 2 failures, cools down a
// minute.
var testProfile = breaker.Profile{Name: "test", WindowSize: 4, FailureThreshold: 0.5, Cooldown: time.Minute, HalfOpenProbes: 1}

// A trip parks the domain's URLs; a restart within the cooldown re-opens
// the circuit and sends nothing; once the fake clock passes the saved
// RetryAt, the resume fetches exactly what was not done.
func TestTripParksAndARestartDoesNotSkipTheCooldown(t *testing.T) {
	const n = 30
	store := startStore(t, testserver.Config{Products: n, PerPage: n, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 8}})
	path := dbPath(t)
	clk := clocktest.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	run := func() (*checkpoint.Checkpoint, *breaker.Breaker, outcome.Outcome, int) {
		cp := openCP(t, path, checkpoint.Config{Clock: clk})
		b, err := breaker.New(breaker.Config{Profile: testProfile, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Observe(b); err != nil {
			t.Fatal(err)
		}
		cr := newCrawler(t, cp, b, 1)
		redriven, err := cp.Resume(cr.c)
		if err != nil {
			t.Fatal(err)
		}
		_ = cr.c.Visit(store.URL() + "/")
		cr.c.Wait()
		o := outcome.Decide(-1, b, cp)
		cp.SetOutcome(o)
		return cp, b, o, redriven
	}

	cp, b, o, _ := run()
	c := counts(t, cp)
	if o.State != outcome.Tripped || b.State(store.Host()) != circuit.Open || c[storage.Parked] == 0 || c[storage.Failed] == 0 {
		t.Fatalf("first run: %v, circuit %v, counts %v; want tripped, open, URLs parked and failed", o.State, b.State(store.Host()), c)
	}
	if c[storage.Done]+c[storage.Failed]+c[storage.Parked] != n+1 {
		t.Errorf("counts %v: every one of the %d URLs must be done, failed or parked", c, n+1)
	}
	if err := closeCP(cp); err != nil {
		t.Fatal(err)
	}
	sent := store.Count()

	clk.Advance(10 * time.Second) // within the cooldown
	cp, b, o, redriven := run()
	if b.State(store.Host()) != circuit.Open || store.Count() != sent || redriven != 0 || o.State != outcome.Tripped {
		t.Errorf("restart within the cooldown: circuit %v, %d requests sent, %d re-driven, %v; want open, none, none, tripped",
			b.State(store.Host()), store.Count()-sent, redriven, o.State)
	}
	if st := cp.Stats(); st.Deferred != c[storage.Parked]+c[storage.Failed] {
		t.Errorf("%d URLs deferred, want the %d parked and failed", st.Deferred, c[storage.Parked]+c[storage.Failed])
	}
	runs := cp.Runs()
	if len(runs) != 2 || runs[0].Outcome != "tripped" || runs[0].Stopped.IsZero() || len(runs[0].Breakers) != 1 ||
		runs[0].Breakers[0].Domain != store.Host() || !runs[0].Breakers[0].RetryAt.After(clk.Now()) {
		t.Errorf("runs %+v: want the first one tripped, stopped, with %s saved open", runs, store.Host())
	}
	if err := closeCP(cp); err != nil {
		t.Fatal(err)
	}

	if err := store.SetScenario(testserver.Scenario{}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Minute)
	cp, b, o, redriven = run()
	if o.State != outcome.Complete || b.State(store.Host()) != circuit.Closed || redriven != c[storage.Parked]+c[storage.Failed] {
		t.Errorf("after the cooldown: %v (%s), circuit %v, %d re-driven; want complete, closed, %d", o.State, o.Reason, b.State(store.Host()), redriven, c[storage.Parked]+c[storage.Failed])
	}
	if got := counts(t, cp); got[storage.Done] != n+1 || len(got) != 1 {
		t.Errorf("counts %v, want all %d done", got, n+1)
	}
	for _, h := range store.Requests() {
		if h.Status == 200 && store.CountPath(h.Path) > 1 && !wasFailing(store, h.Path) {
			t.Errorf("%s was done and fetched again", h.Path)
		}
	}
}

// wasFailing reports whether path was once answered by the degradation.
func wasFailing(s *testserver.Store, path string) bool {
	for _, h := range s.Requests() {
		if h.Path == path && h.Failing() {
			return true
		}
	}
	return false
}

// A 429 the breaker sends again never spends an attempt.
func TestThrottledRetryDoesNotSpendAnAttempt(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 3, PerPage: 3, Scenario: testserver.Scenario{
		Mode: testserver.Throttle, After: 2, RetryAfter: time.Second, RecoverAfter: 100 * time.Millisecond}})
	cp := openCP(t, dbPath(t))
	b, err := breaker.New(breaker.Config{Profile: testProfile})
	if err == nil {
		err = cp.Observe(b)
	}
	if err != nil {
		t.Fatal(err)
	}
	cr := newCrawler(t, cp, b, 1)
	_ = cr.c.Visit(store.URL() + "/")
	cr.c.Wait()
	if store.CountMode(testserver.Throttle) == 0 {
		t.Fatal("the store throttled nothing")
	}
	err = cp.Store().Scan(func(r storage.Record) error {
		if r.State != storage.Done || r.Attempts != 1 {
			t.Errorf("%s: %v after %d attempts; want done after 1 (the throttled one given back)", r.URL, r.State, r.Attempts)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// 404 is dead at once, with the reason, and listed; a degraded page dies
// after MaxAttempts runs, and makes the run an error.
func TestGoneIsDeadAtOnceAndFailuresDieAfterMaxAttempts(t *testing.T) {
	gone := startStore(t, testserver.Config{Products: 4, PerPage: 4, Scenario: testserver.Scenario{Mode: testserver.Gone, After: 2}})
	sick := startStore(t, testserver.Config{Products: 4, PerPage: 4, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 3}})
	path := dbPath(t)
	for run := 1; run <= 3; run++ {
		cp := openCP(t, path, checkpoint.Config{MaxAttempts: 3})
		cr := newCrawler(t, cp, nil, 1) // no breaker: OnError decides
		if _, err := cp.Resume(cr.c); err != nil {
			t.Fatal(err)
		}
		_ = cr.c.Visit(gone.URL() + "/")
		_ = cr.c.Visit(sick.URL() + "/")
		cr.c.Wait()
		c := counts(t, cp)
		ev := cp.Judge()
		switch run {
		case 1, 2:
			if c[storage.Dead] != 3 || c[storage.Failed] != 2 || len(ev.Findings) != 1 || ev.Findings[0].Kind != "unfinished" {
				t.Errorf("run %d: counts %v, findings %+v; want 3 dead (404), 2 failed, unfinished", run, c, ev.Findings)
			}
		case 3:
			// The 503s spent their attempts: a person decides (error);
			// the 404s are gone, and fine.
			if c[storage.Dead] != 5 || len(ev.Findings) != 1 || ev.Findings[0].Kind != "dead" || ev.Findings[0].State != outcome.Error ||
				len(ev.Findings[0].Domains) != 1 || ev.Findings[0].Domains[0] != sick.Host() {
				t.Errorf("run 3: counts %v, findings %+v; want 5 dead, an error naming the 503 store's 2 dead URLs alone", c, ev.Findings)
			}
			dl, err := cp.DeadLetters()
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range dl {
				want := "HTTP 404"
				if strings.HasPrefix(d.URL, sick.URL()) {
					want = "HTTP 503"
				}
				if !strings.Contains(d.LastError, want) {
					t.Errorf("dead letter %+v: want its last error %q", d, want)
				}
				if want == "HTTP 404" && d.Attempts != 1 || want == "HTTP 503" && d.Attempts != 3 {
					t.Errorf("dead letter %+v: a 404 dies at the first attempt, a 503 at the third", d)
				}
			}
		}
		if err := closeCP(cp); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 4; i++ {
		p := testserver.ProductPath(i)
		want := 1
		if wasFailing(sick, p) {
			want = 3
		}
		if gone.CountPath(p) != 1 || sick.CountPath(p) != want {
			t.Errorf("%s: requested %d times on the 404 store (want 1), %d on the 503 one (want %d)", p, gone.CountPath(p), sick.CountPath(p), want)
		}
	}
}

// A redirect: the URL visited is the one recorded (and re-issued), the
// page it ended at is visited for the run, and no done record waits for
// the hop, which is never requested.
func TestRedirectRecordsTheVisitedURLAndHoldsNothing(t *testing.T) {
	var newHits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body><a href="/old">old</a><a href="/other">other</a></body></html>`)
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			newHits.Add(1)
			fmt.Fprint(w, `<html><body>new</body></html>`)
		default:
			fmt.Fprint(w, `<html><body><a href="/new">new</a></body></html>`)
		}
	}))
	defer srv.Close()
	cp := openCP(t, dbPath(t))
	c := colly.NewCollector(colly.Async(true))
	cp.Register(c)
	c.OnHTML("a", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	_ = c.Visit(srv.URL + "/")
	c.Wait()
	st := cp.Stats()
	if st.GraceFreed != 0 {
		t.Errorf("stats %+v: a done record waited out the grace period for a hop", st)
	}
	for _, p := range []string{"/", "/old", "/other"} {
		r, ok, err := cp.Store().Get(collyx.RequestID(srv.URL+p, nil))
		if err != nil || !ok || r.State != storage.Done || r.URL != srv.URL+p {
			t.Errorf("%s: %+v %v %v; want done under its own URL", p, r, ok, err)
		}
	}
	if n := newHits.Load(); n != 1 {
		t.Errorf("/new served %d times, want once: by the redirect or by the link, whichever came first", n)
	}
	if v, _ := c.HasVisited(srv.URL + "/new"); !v {
		t.Errorf("the page a redirect ended at is not visited for the run")
	}
}

// inflightDone is how many pages the "inflight" helper's store answers
// before every request hangs: the listing and 6 of its 10 products.
const inflightDone = 7

// A process killed with requests in flight leaves them in flight in the
// file. A resume gives each its attempt back and fetches it again, once;
// it fetches nothing that was done.
func TestInFlightAtACrashIsFetchedAgainExactlyOnce(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 10, PerPage: 10,
		Scenario: testserver.Scenario{Mode: testserver.Hang, After: inflightDone}})
	path := dbPath(t)
	t.Setenv("BW_CP_URL", store.URL())
	cmd, lines := helper(t, "inflight", path)
	next(t, lines, "inflight")
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: nothing of the checkpoint's shutdown runs
		t.Fatal(err)
	}
	_ = cmd.Wait()

	// What the crash left: 4 URLs in flight.
	s, err := bolt.Open(path, bolt.Config{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	inflight := map[string]bool{}
	err = s.Scan(func(r storage.Record) error {
		u, err := url.Parse(r.URL)
		if err != nil {
			return err
		}
		inflight[u.Path] = true
		return nil
	}, storage.InFlight)
	if err := errors.Join(err, s.Close()); err != nil {
		t.Fatal(err)
	}
	if len(inflight) != 4 {
		t.Fatalf("the crash left %d URLs in flight (%v), want 4", len(inflight), inflight)
	}

	if err := store.SetScenario(testserver.Scenario{}); err != nil {
		t.Fatal(err)
	}
	before := store.Count()
	cp := openCP(t, path)
	cr := newCrawler(t, cp, nil, 4)
	n, err := cp.Resume(cr.c)
	if err != nil {
		t.Fatal(err)
	}
	_ = cr.c.Visit(store.URL() + "/")
	cr.c.Wait()
	if n != 4 {
		t.Errorf("Resume issued %d URLs, want the 4 in flight at the crash", n)
	}
	fetched := map[string]int{}
	for _, h := range store.Requests()[before:] {
		fetched[h.Path]++
	}
	for p := range inflight {
		if fetched[p] != 1 {
			t.Errorf("%s, in flight at the crash, fetched %d times on resume, want once", p, fetched[p])
		}
	}
	for p, k := range fetched {
		if !inflight[p] {
			t.Errorf("%s, done before the crash, fetched %d times on resume", p, k)
		}
	}
	c := counts(t, cp)
	if c[storage.Done] != 11 || len(c) != 1 {
		t.Errorf("counts after the resume %v, want all 11 pages done", c)
	}
	for p := range inflight {
		r, ok, err := cp.Store().Get(collyx.RequestID(store.URL()+p, nil))
		if err != nil || !ok || r.Attempts != 1 {
			t.Errorf("%s after the resume: attempts %d (%v, %v), want 1: the crashed attempt given back", p, r.Attempts, ok, err)
		}
	}
}
