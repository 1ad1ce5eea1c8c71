package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// robotsFront serves robots.txt as the test says and passes every other
// request to the store: a site with a robots.txt.
type robotsFront struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	body   string
	asked  int // robots.txt requests
}

func newRobotsFront(t *testing.T, store *testserver.Store, status int, body string) *robotsFront {
	t.Helper()
	f := &robotsFront{status: status, body: body}
	target, _ := url.Parse(store.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			proxy.ServeHTTP(w, r)
			return
		}
		f.mu.Lock()
		f.asked++
		status, body := f.status, f.body
		f.mu.Unlock()
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *robotsFront) set(status int, body string) {
	f.mu.Lock()
	f.status, f.body = status, body
	f.mu.Unlock()
}

func (f *robotsFront) robotsAsked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

func (f *robotsFront) host() string { return strings.TrimPrefix(f.URL, "http://") }

// URLs robots.txt disallows are never requested, and the report lists
// them under robots, not as failures or unfinished work. Without
// --obey-robots, Colly's default, they are crawled.
func TestObeyRobotsSkipsDisallowedURLsAndListsThem(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 12, PerPage: 12})
	front := newRobotsFront(t, store, 200, "User-agent: *\nDisallow: /products/sku-1\n") // sku-1, sku-10, sku-11, sku-12
	r := runCrawl(t, "--obey-robots", "--report", "json", "--log-level", "warn", front.URL+"/")
	rep := r.report(t)
	d := rep.domain(t, front.host())
	if r.code != 0 || d.Robots != 4 || rep.Outcome.Records != 8 || d.Unfinished != 0 || d.Failures.Degraded != 0 || d.Failures.Blocked != 0 {
		t.Fatalf("exit %d, domain %+v, %d records: want complete, 8 records, robots 4, nothing unfinished or failed\n%s", r.code, d, rep.Outcome.Records, r.stderr)
	}
	for _, n := range []int{1, 10, 11, 12} {
		if c := store.CountPath(testserver.ProductPath(n)); c != 0 {
			t.Errorf("%s requested %d times, robots.txt disallows it", testserver.ProductPath(n), c)
		}
	}
	if front.robotsAsked() != 1 {
		t.Errorf("robots.txt fetched %d times, want once a run", front.robotsAsked())
	}
	var text strings.Builder
	text.WriteString(runCrawl(t, "--obey-robots", "--log-level", "warn", front.URL+"/").stdout)
	heads := strings.Fields(lineStarting(text.String(), "domain "))
	if !strings.Contains(strings.Join(heads, " "), "robots") || lineStarting(text.String(), "  robots ") == "" {
		t.Errorf("the text report has no robots column and legend:\n%s", text.String())
	}

	store.Reset()
	r = runCrawl(t, "--report", "json", "--log-level", "warn", front.URL+"/")
	if r.report(t).Outcome.Records != 12 {
		t.Errorf("without --obey-robots: %d records, want all 12 (Colly ignores robots.txt unless told)", r.report(t).Outcome.Records)
	}
}

// A Crawl-delay is the domain's least gap between two requests, capped by
// --max-crawl-delay.
func TestObeyRobotsCrawlDelayIsTheLeastGap(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	store := startStore(t, testserver.Config{Products: 3, PerPage: 3})
	front := newRobotsFront(t, store, 200, "User-agent: *\nCrawl-delay: 0.3\n")
	r := runCrawl(t, "--obey-robots", "--log-format", "json", front.URL+"/")
	if r.code != 0 || !strings.Contains(lineWith(r.stderr, `"event":"crawl_delay"`), `"gap":300`) {
		t.Fatalf("exit %d: want 0 and a crawl_delay event with a 300 ms gap\n%s", r.code, r.stderr)
	}
	hits := store.Requests()
	if len(hits) != 4 {
		t.Fatalf("%d requests, want 4", len(hits))
	}
	// Kept between departures, seen at arrival: 50 ms for the scheduler
	// (TestProfilesFilePacesADomain).
	for i := 1; i < len(hits); i++ {
		if gap := hits[i].Time.Sub(hits[i-1].Time); gap < 250*time.Millisecond {
			t.Errorf("requests %d and %d arrived %v apart, want at least the 300 ms Crawl-delay", i, i+1, gap)
		}
	}

	front.set(200, "User-agent: *\nCrawl-delay: 3600\n")
	r = runCrawl(t, "--obey-robots", "--max-crawl-delay", "10ms", "--log-format", "json", front.URL+"/")
	if ev := lineWith(r.stderr, `"event":"crawl_delay"`); r.code != 0 || !strings.Contains(ev, `"gap":10`) {
		t.Errorf("exit %d, event %s: want the hour cut to 10 ms", r.code, ev)
	}
}

// A robots.txt answering 503 is not "disallow all" for the run: the
// domain is paused like an open circuit, its URLs kept for a later run
// (tripped, never counted as robots-forbidden or failed), and robots.txt is
// fetched again then. A URL resumed from the checkpoint that robots.txt
// disallows by then is settled without a request.
func TestObeyRobots5xxPausesTheDomainUntilRobotsIsFetchedAgain(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 6, PerPage: 6})
	front := newRobotsFront(t, store, 503, "")
	dir := t.TempDir()
	args := []string{"--obey-robots", "--resume", "--report", "json", "--log-format", "json", front.URL + "/"}
	r := runCrawlIn(t, dir, args...)
	rep := r.report(t)
	d := rep.domain(t, front.host())
	if r.code != 2 || store.Count() != 0 || d.Robots != 0 || d.Unfinished != 1 || d.State != "open" || !rep.hasFinding("robots_unavailable", front.host()) {
		t.Fatalf("robots.txt 503: exit %d, %d requests, domain %+v, findings %+v: want tripped, nothing sent, the start URL unfinished (not robots), the domain open",
			r.code, store.Count(), d, rep.Outcome.Findings)
	}
	if !strings.Contains(lineWith(r.stderr, `"event":"robots_unavailable"`), `"level":"warn"`) {
		t.Errorf("no robots_unavailable warning:\n%s", r.stderr)
	}

	// After the cooldown robots.txt is fetched again, and now answers.
	front.set(200, "User-agent: *\nDisallow: /products/sku-6\n")
	ageCheckpoint(t, filepath.Join(dir, "crawl.db"), time.Hour)
	r = runCrawlIn(t, dir, args...)
	rep = r.report(t)
	if d := rep.domain(t, front.host()); r.code != 0 || rep.Outcome.Records != 5 || d.Robots != 1 || front.robotsAsked() != 2 {
		t.Fatalf("after the cooldown: exit %d, %d records, domain %+v, robots.txt asked %d times: want complete, 5 records, 1 robots, robots.txt fetched again",
			r.code, rep.Outcome.Records, d, front.robotsAsked())
	}
}

// A URL the checkpoint holds, disallowed by the time it is resumed, is
// settled without touching the network and counted under robots, not
// left unfinished for ever.
func TestObeyRobotsSettlesAResumedURLItDisallows(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 3, PerPage: 3})
	front := newRobotsFront(t, store, 503, "")
	dir := t.TempDir()
	args := []string{"--obey-robots", "--resume", "--report", "json", "--log-level", "warn", front.URL + "/"}
	if r := runCrawlIn(t, dir, args...); r.code != 2 {
		t.Fatalf("first run: exit %d, want 2\n%s", r.code, r.stderr)
	}
	front.set(200, "User-agent: *\nDisallow: /\n")
	ageCheckpoint(t, filepath.Join(dir, "crawl.db"), time.Hour)
	r := runCrawlIn(t, dir, args...)
	rep := r.report(t)
	d := rep.domain(t, front.host())
	if store.Count() != 0 || d.Robots != 1 || d.Unfinished != 0 || r.code != 3 {
		t.Fatalf("resumed: exit %d, %d requests, domain %+v: want empty (3), none sent, robots 1, nothing unfinished", r.code, store.Count(), d)
	}
	if r := runCrawlIn(t, dir, args...); r.code != 3 || store.Count() != 0 {
		t.Errorf("again: exit %d, %d requests: want the URL settled for good", r.code, store.Count())
	}
}
