package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
)

func TestCaseIsDrawnFromItsSeed(t *testing.T) {
	for i := range 50 {
		s := caseSeed(1, i)
		a, b := NewCase(s), NewCase(s)
		if a.String() != b.String() {
			t.Fatalf("seed %d drew two cases:\n%s\n%s", s, a, b)
		}
		if !strings.Contains(a.Replay(), "-replay ") || !strings.Contains(a.String(), "seed=") {
			t.Fatalf("case %s: replay %q", a, a.Replay())
		}
		if a.Bound() <= 0 {
			t.Fatalf("case %s: bound %v", a, a.Bound())
		}
	}
	if NewCase(caseSeed(1, 0)).String() == NewCase(caseSeed(2, 0)).String() {
		t.Fatal("two run seeds drew the same first case")
	}
}

// judge runs the checker over a made-up case: one store of kind k with the
// given log, one run that ended with exit.
func judge(w Wiring, s Site, hits []testserver.Hit, out []string, exit int) []Violation {
	c := Case{Seed: 1, Sites: []Site{s}, Wiring: w}
	ss := &site{Site: s, url: "http://127.0.0.1:1", host: "127.0.0.1:1"}
	r := runOut{exit: exit, carried: -1, outcome: outcome.Outcome{State: outcome.Complete}}
	cr := &caseRun{c: c, sites: []*site{ss}, hits: [][]testserver.Hit{hits}, out: out, runs: []runOut{r}, final: r, bound: time.Second}
	return cr.check()
}

func has(vs []Violation, inv int) bool {
	for _, v := range vs {
		if v.Inv == inv {
			return true
		}
	}
	return false
}

func TestNoRequestIsAViolation(t *testing.T) {
	vs := judge(Wiring{Async: true, Profile: breaker.Standard()}, Site{Kind: kHealthy, Products: 3, PerPage: 3}, nil, nil, 0)
	if !has(vs, 0) {
		t.Fatalf("a case with an empty store log passed: %v", vs)
	}
}

func TestTooManyRequestsIntoAFailingStoreBreakInvariant5(t *testing.T) {
	w := Wiring{Async: true, Limit: limGlob, LimitP: 2, Profile: breaker.Standard()} // bound 10 + 2 - 1
	var hits []testserver.Hit
	for i := range 12 {
		hits = append(hits, testserver.Hit{Seq: i + 1, Path: "/", Status: 503, Mode: testserver.Degrade})
	}
	if vs := judge(w, Site{Kind: kDegrade, Products: 3, PerPage: 3}, hits, nil, 2); !has(vs, 5) {
		t.Fatalf("12 failing requests for a bound of 11 passed: %v", vs)
	}
	if vs := judge(w, Site{Kind: kDegrade, Products: 3, PerPage: 3}, hits[:11], nil, 2); has(vs, 5) {
		t.Fatalf("11 failing requests for a bound of 11 failed: %v", vs)
	}
}

func TestCompleteWithAFailedPageBreaksInvariant4(t *testing.T) {
	hits := []testserver.Hit{{Seq: 1, Path: "/", Status: 503, Mode: testserver.Degrade}}
	vs := judge(Wiring{Async: true, Profile: breaker.Standard()}, Site{Kind: kDegrade, Products: 3, PerPage: 3}, hits, nil, 0)
	if !has(vs, 4) || !has(vs, 3) {
		t.Fatalf("complete after the start page failed passed: %v", vs)
	}
}

func TestRequestInsideARetryAfterBreaksInvariant6(t *testing.T) {
	t0 := time.Now()
	hits := []testserver.Hit{
		{Seq: 1, Time: t0, Path: "/", Status: 429, Mode: testserver.Throttle},
		{Seq: 2, Time: t0.Add(500 * time.Millisecond), Path: "/", Status: 429, Mode: testserver.Throttle},
	}
	s := Site{Kind: kThrottle, Products: 3, PerPage: 3, Status: 429, RetryAfter: time.Second}
	if vs := judge(Wiring{Async: true, Profile: breaker.Standard()}, s, hits, nil, 2); !has(vs, 6) {
		t.Fatalf("a request 500 ms into a 1 s Retry-After passed: %v", vs)
	}
	hits[1].Time = t0.Add(1100 * time.Millisecond)
	if vs := judge(Wiring{Async: true, Profile: breaker.Standard()}, s, hits, nil, 2); has(vs, 6) {
		t.Fatalf("a request after the Retry-After failed: %v", vs)
	}
}

func TestDuplicateRecordBreaksInvariant2(t *testing.T) {
	hits := []testserver.Hit{{Seq: 1, Path: "/", Status: 200}}
	out := []string{"http://127.0.0.1:1/products/sku-1", "http://127.0.0.1:1/products/sku-1"}
	if vs := judge(Wiring{Async: true, Profile: breaker.Standard()}, Site{Kind: kHealthy, Products: 3, PerPage: 3}, hits, out, 2); !has(vs, 2) {
		t.Fatalf("a product written twice passed: %v", vs)
	}
}

func TestHealthyStoreNotCrawledWholeBreaksInvariant7(t *testing.T) {
	hits := []testserver.Hit{{Seq: 1, Path: "/", Status: 200}}
	if vs := judge(Wiring{Async: true, Profile: breaker.Standard()}, Site{Kind: kHealthy, Products: 3, PerPage: 3}, hits, nil, 2); !has(vs, 7) {
		t.Fatalf("a healthy store with its products unwritten passed: %v", vs)
	}
}

// A listing page the store cuts reaches the crawler through the front as
// a cut too: headers, then the connection ends. Had the front hung up
// before its headers, the crawler's transport would re-send the GET on a
// reused connection, and the store would log a request the user's
// transport never carried (invariant 9, seed 17845694604428315181).
func TestFrontPassesACutListingOnAsACut(t *testing.T) {
	ss, err := startSite(Site{Kind: kTruncated, Products: 6, PerPage: 3, Extra404: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 5 * time.Second}
	for i, path := range []string{"/", "/list/2"} {
		resp, err := client.Get(ss.url + path)
		if err != nil {
			t.Fatalf("GET %s: %v, want the headers of a cut page", path, err)
		}
		_, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || rerr == nil {
			t.Fatalf("GET %s: %d, body error %v; want 200 and a cut body", path, resp.StatusCode, rerr)
		}
		if n := ss.store.Count(); n != i+1 {
			t.Fatalf("after GET %s the store logged %d requests, want %d", path, n, i+1)
		}
	}
}

// A sustained throttle's bound grows with the sends, the gap doubling at
// each, and stops at the pacing horizon (5 min) plus a last gap: seed
// 9669681848310988652 (sync, a retry loop, a store answering only 429)
// ran for minutes, as designed, past a bound that counted 12 sends.
func TestThrottleCostFollowsTheGapToTheHorizon(t *testing.T) {
	if got := throttleCost(time.Second, 1); got != 1500*time.Millisecond {
		t.Errorf("one send: %v, want the Retry-After and 500 ms", got)
	}
	// 7 sends under the 1 s Retry-After (gaps 20 ms … 1.28 s), then 2.56 s.
	if got, want := throttleCost(time.Second, 8), 6*1500*time.Millisecond+1780*time.Millisecond+3060*time.Millisecond; got != want {
		t.Errorf("eight sends: %v, want %v", got, want)
	}
	if got, want := throttleCost(time.Second, 44), 5*time.Minute+time.Minute+time.Second+5*time.Second; got != want {
		t.Errorf("44 sends: %v, want the horizon's %v", got, want)
	}
}

// A worker started once Redis came back empty (Fault.Late) cannot know a
// pause answered to another worker before it started, whether before the
// kill, during the outage or after: the others' writes into the emptied
// Redis are refused as lost. A request it sends inside such a pause is
// not a violation; one sent before it started still is.
func TestLateWorkerIsExcusedAPauseAnsweredBeforeItStarted(t *testing.T) {
	t0 := time.Now()
	s := Site{Kind: kThrottle, Products: 3, PerPage: 3, Status: 503, RetryAfter: time.Second, RA: raSeconds}
	ss := &site{Site: s, url: "http://127.0.0.1:1", host: "127.0.0.1:1"}
	judge := func(answer, next time.Duration) bool {
		hits := []testserver.Hit{
			{Seq: 1, Time: t0.Add(answer), Path: "/products/sku-1", Status: 503, Mode: testserver.Throttle},
			{Seq: 2, Time: t0.Add(next), Path: "/", Status: 200},
		}
		c := Case{Seed: 1, Sites: []Site{s}, Wiring: Wiring{Async: true, Workers: 2, Profile: breaker.Standard()},
			Fault: Fault{Kind: fRedisRestart, At: 400 * time.Millisecond, Late: true}}
		runs := []runOut{{start: t0, end: t0.Add(3 * time.Second)}, {start: t0.Add(900 * time.Millisecond), end: t0.Add(3 * time.Second)}}
		cr := &caseRun{c: c, sites: []*site{ss}, hits: [][]testserver.Hit{hits}, runs: runs,
			redisKilled: t0.Add(400 * time.Millisecond), redisBack: t0.Add(600 * time.Millisecond)}
		violated := false
		cr.checkRetryAfter(func(inv int, _ string, _ ...any) { violated = violated || inv == 6 }, 0, ss, hits)
		return violated
	}
	for _, tc := range []struct {
		name         string
		answer, next time.Duration
		want         bool
	}{
		{"answered before the kill, sent after the late start", 300 * time.Millisecond, 1000 * time.Millisecond, false},
		{"answered during the outage, sent after the late start", 500 * time.Millisecond, 1000 * time.Millisecond, false},
		{"answered after Redis came back, sent after the late start", 650 * time.Millisecond, 1100 * time.Millisecond, false},
		{"answered during the outage, sent before the late start", 410 * time.Millisecond, 800 * time.Millisecond, true},
		{"answered after the late start, sent after it", 1000 * time.Millisecond, 1400 * time.Millisecond, true},
	} {
		if got := judge(tc.answer, tc.next); got != tc.want {
			t.Errorf("%s: violation %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Workers pace a rate-limited site each on their own, so their requests
// collide in its bucket, and every 429 pauses them all for a Retry-After
// in whole seconds: seed 7391146210954546813 (3 workers, rate 25/s,
// burst 1, an HTTP-date Retry-After, 99 pages) took 34-64 s and more, past
// a bound of 63.7 s that assumed half the site's rate. The bound allots
// such a site a second a page.
func TestRateLimitBoundCoversWorkersColliding(t *testing.T) {
	c := NewCase(7391146210954546813)
	var pages time.Duration
	for _, s := range c.Sites {
		if s.Kind == kRateLimit {
			pages += time.Duration(s.Products + s.Products/max(1, s.PerPage) + 2)
		}
	}
	if c.Wiring.Workers < 2 || pages == 0 {
		t.Fatalf("the seed no longer draws its case: %s", c)
	}
	if b := c.Bound(); b < pages*time.Second {
		t.Fatalf("bound %v for %s: under a second for each of the rate-limited site's %d pages", b, c, pages)
	}
}

// A SIGQUIT is a crash only for a run that had not said how it ended:
// seed 15390342749999579315 sent it 1.124 s in, as the run ended tripped
// on its own (the whole case, resume included, takes 2.3 s), and the exit
// 2 was that ending, not a crash read as a trip.
func TestSIGQUITAfterTheRunEndedIsNotACrash(t *testing.T) {
	ended := `{"level":"warn","event":"run_finished","state":"tripped","exit_code":2}` + "\nSIGQUIT: quit\n"
	if crashedBySignal(ended) {
		t.Error("a run that had said it ended tripped was counted as crashed")
	}
	if !crashedBySignal("SIGQUIT: quit\ngoroutine 1 [running]:\n") {
		t.Error("a run the SIGQUIT stopped mid-crawl was not counted as crashed")
	}
}

// With nothing of the user's limiting a domain, the breaker's room caps
// what is in flight at need: the bound is need + need − 1, not one that
// grows with the URLs queued (which could not fail).
func TestInvariant5JudgesAnUnlimitedDomainByTheRoom(t *testing.T) {
	w := Wiring{Async: true, Profile: breaker.Standard()} // need 10: bound 10 + 10 - 1
	if p := w.Parallelism(); p != 10 {
		t.Fatalf("P = %d with no limit, want need (10)", p)
	}
	var hits []testserver.Hit
	for i := range 40 {
		hits = append(hits, testserver.Hit{Seq: i + 1, Path: testserver.ProductPath(i + 1), Status: 503, Mode: testserver.Degrade})
	}
	s := Site{Kind: kDegrade, Products: 40, PerPage: 40}
	if vs := judge(w, s, hits[:20], nil, 2); !has(vs, 5) {
		t.Fatalf("20 failing requests for a bound of 19 passed: %v", vs)
	}
	if vs := judge(w, s, hits[:19], nil, 2); has(vs, 5) {
		t.Fatalf("19 failing requests for a bound of 19 failed: %v", vs)
	}
	// A redirect takes the product links past a per-host rule and the
	// pace: there the room alone limits the store.
	w = Wiring{Async: true, Limit: limPerHost, LimitP: 2, Pacing: 1, Redirect: true, Profile: breaker.Standard()}
	if p := w.Parallelism(); p != 10 {
		t.Fatalf("P = %d through a redirect past a per-host rule, want need (10)", p)
	}
	w.Limit = limGlob
	if p := w.Parallelism(); p != 2 {
		t.Fatalf("P = %d through a redirect under a glob rule of 2, want 2", p)
	}
	// An unregistered clone's requests pass the pace (the breaker's room
	// bounds them at the transport) but take the per-host rule's slot
	// (chaos/SEEDS.md, seed 12014556444401271304).
	w = Wiring{Async: true, Limit: limPerHost, LimitP: 4, Pacing: 1, Clone: true, Profile: breaker.Standard()}
	if p := w.Parallelism(); p != 4 {
		t.Fatalf("P = %d for a clone under a per-host rule of 4 and a pace of 1, want 4", p)
	}
}

// Existing seeds keep their dimensions: the features come from a stream
// of their own, and a productcrawl case draws none.
func TestFeaturesLeaveEarlierDimensionsAlone(t *testing.T) {
	any := false
	for i := range 200 {
		c := NewCase(caseSeed(1, i))
		f := c.Wiring.Features()
		if c.Wiring.Process && len(f) > 0 {
			t.Fatalf("a productcrawl case drew Colly features: %s", c)
		}
		any = any || len(f) > 0
		w := c.Wiring
		w.Clone, w.CacheDir, w.Delay, w.RandomDelay, w.Revisits, w.Queue, w.Redirect, w.MaxDepth, w.MaxRequests = false, false, 0, 0, 0, 0, false, 0, 0
		if len(w.Features()) != 0 || len(w.FeatureKeys()) != 0 {
			t.Fatalf("features left: %v", w.Features())
		}
		if len(c.Wiring.FeatureKeys()) != len(f) {
			t.Fatalf("keys %v for features %v", c.Wiring.FeatureKeys(), f)
		}
	}
	if !any {
		t.Fatal("200 cases drew no Colly feature")
	}
}

// A run that outlasts the circuit's cooldown (a Redis worker waiting for
// its parked jobs) sends the half-open probes the profile allows after
// each cooldown: they are not over the trip bound. Probes before a
// cooldown has passed are (chaos/SEEDS.md, seed 10374338256965938493).
func TestInvariant5AllowsTheProbesAfterACooldown(t *testing.T) {
	w := Wiring{Async: true, Limit: limGlob, LimitP: 2, Profile: breaker.Standard()} // bound 10 + 2 - 1; 2 probes a cooldown
	start := time.Unix(1_700_000_000, 0)
	var hits []testserver.Hit
	for i := range 11 {
		hits = append(hits, testserver.Hit{Seq: i + 1, Time: start.Add(time.Duration(i) * 10 * time.Millisecond), Path: testserver.ProductPath(i + 1), Status: 503, Mode: testserver.Degrade})
	}
	probe := func(after time.Duration, n int) testserver.Hit {
		return testserver.Hit{Seq: 11 + n, Time: start.Add(after), Path: testserver.ProductPath(11 + n), Status: 503, Mode: testserver.Degrade}
	}
	s := Site{Kind: kDegrade, Products: 20, PerPage: 20}
	cooldown := w.Profile.Cooldown
	late := append(hits[:11:11], probe(cooldown+time.Second, 1), probe(cooldown+2*time.Second, 2))
	if vs := judge(w, s, late, nil, 2); has(vs, 5) {
		t.Fatalf("11 failing requests and the 2 probes a cooldown later failed: %v", vs)
	}
	early := append(hits[:11:11], probe(cooldown/2, 1))
	if vs := judge(w, s, early, nil, 2); !has(vs, 5) {
		t.Fatalf("a 12th failing request before the cooldown passed: %v", vs)
	}
	tooMany := append(late, probe(cooldown+3*time.Second, 3))
	if vs := judge(w, s, tooMany, nil, 2); !has(vs, 5) {
		t.Fatalf("3 probes after one cooldown, 2 allowed, passed: %v", vs)
	}
}

// A full disk stops productcrawl's first run; the checkpoint flushes a
// 429's pause at once, and that flush can be the very commit the full
// disk refused (seed 6334285897082379505: the pause logged 2 ms before
// the commit failed). The resume cannot honour a pause its checkpoint
// never held; one the checkpoint saved binds it, and the first run is
// bound by every pause it was answered.
func TestAPauseAFullDiskKeptFromTheCheckpointDoesNotBindTheResume(t *testing.T) {
	t0 := time.Now()
	s := Site{Kind: kThrottle, Products: 3, PerPage: 3, Status: 429, RetryAfter: time.Second, RA: raSeconds}
	ss := &site{Site: s, url: "http://127.0.0.1:1", host: "127.0.0.1:1"}
	judge := func(next time.Duration, saved bool) bool {
		hits := []testserver.Hit{
			{Seq: 1, Time: t0.Add(100 * time.Millisecond), Path: "/products/sku-1", Status: 429, Mode: testserver.Throttle},
			{Seq: 2, Time: t0.Add(next), Path: "/", Status: 200},
		}
		c := Case{Seed: 1, Sites: []Site{s}, Wiring: Wiring{Process: true, Async: true, Profile: breaker.Conservative()},
			Fault: Fault{Kind: fDiskFull, Limit: 100 << 10}}
		runs := []runOut{{start: t0, end: t0.Add(600 * time.Millisecond), exit: 1}, {start: t0.Add(650 * time.Millisecond), end: t0.Add(3 * time.Second)}}
		cr := &caseRun{c: c, sites: []*site{ss}, hits: [][]testserver.Hit{hits}, runs: runs, savedHalt: map[string]time.Time{}}
		if saved {
			cr.savedHalt[ss.host] = t0.Add(1100 * time.Millisecond)
		}
		violated := false
		cr.checkRetryAfter(func(inv int, _ string, _ ...any) { violated = violated || inv == 6 }, 0, ss, hits)
		return violated
	}
	for _, tc := range []struct {
		name  string
		next  time.Duration
		saved bool
		want  bool
	}{
		{"not saved, sent by the resume", 700 * time.Millisecond, false, false},
		{"saved, sent by the resume", 700 * time.Millisecond, true, true},
		{"not saved, sent by the first run", 450 * time.Millisecond, false, true},
	} {
		if got := judge(tc.next, tc.saved); got != tc.want {
			t.Errorf("%s: violation %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A product page the store served whole twice breaks invariant 2, unless
// the client's own Client.Timeout ended the first request (the scraper's
// OnError saw it): the page was never read, and a retry fetched it again.
func TestAPageFetchedAgainAfterTheClientsTimeoutIsNotTwice(t *testing.T) {
	s := Site{Kind: kHealthy, Products: 1, PerPage: 1}
	hits := []testserver.Hit{
		{Seq: 1, Path: "/", Status: 200, Mode: testserver.Healthy},
		{Seq: 2, Path: "/products/sku-1", Status: 200, Mode: testserver.Healthy},
		{Seq: 3, Path: "/products/sku-1", Status: 200, Mode: testserver.Healthy},
	}
	out := []string{"http://127.0.0.1:1/products/sku-1"}
	run := func(timedOut map[string]int) []Violation {
		c := Case{Seed: 1, Sites: []Site{s}, Wiring: Wiring{Async: true, Profile: breaker.Standard()}}
		ss := &site{Site: s, url: "http://127.0.0.1:1", host: "127.0.0.1:1"}
		r := runOut{carried: -1, outcome: outcome.Outcome{State: outcome.Complete}, timedOut: timedOut}
		cr := &caseRun{c: c, sites: []*site{ss}, hits: [][]testserver.Hit{hits}, out: out, runs: []runOut{r}, final: r, bound: time.Second}
		return cr.check()
	}
	if vs := run(nil); !has(vs, 2) {
		t.Fatalf("a page served whole twice passed: %v", vs)
	}
	if vs := run(map[string]int{"http://127.0.0.1:1/products/sku-1": 1}); has(vs, 2) {
		t.Fatalf("a page fetched again after the client's timeout broke invariant 2: %v", vs)
	}
	if vs := run(map[string]int{"http://127.0.0.1:1/products/sku-2": 1}); !has(vs, 2) {
		t.Fatalf("another page's timeout excused a page served whole twice: %v", vs)
	}
}
