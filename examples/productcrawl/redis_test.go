package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	goredis "github.com/redis/go-redis/v9"
)

// The -redis tests run productcrawl processes against a real Redis
// (redistest: REDIS_URL, else a redis-server the test binary starts). Each
// test's crawl id is redistest's unique prefix, so runs never see each
// other, and every key of the crawl is deleted when the test ends.

// sharedCrawl is one test's crawl in Redis.
type sharedCrawl struct {
	url    string // the -redis URL
	id     string // the -crawl-id
	client *goredis.Client
}

func newSharedCrawl(t *testing.T) sharedCrawl {
	t.Helper()
	client, prefix := redistest.New(t)
	o := client.Options()
	u := url.URL{Scheme: "redis", Host: o.Addr, Path: "/" + strconv.Itoa(o.DB)}
	if o.Password != "" {
		u.User = url.UserPassword(o.Username, o.Password)
	}
	sc := sharedCrawl{url: u.String(), id: prefix, client: client}
	t.Cleanup(func() { // before redistest closes the client: cleanups run last first
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var cursor uint64
		for {
			keys, next, err := client.Scan(ctx, cursor, redis.DefaultNamespace+":{"+sc.id+"}:*", 1000).Result()
			if err != nil {
				t.Errorf("deleting the crawl's keys: %v", err)
				return
			}
			if len(keys) > 0 {
				if err := client.Unlink(ctx, keys...).Err(); err != nil {
					t.Errorf("deleting the crawl's keys: %v", err)
					return
				}
			}
			if cursor = next; cursor == 0 {
				return
			}
		}
	})
	return sc
}

// args are the flags every worker of the crawl is started with.
func (sc sharedCrawl) args(more ...string) []string {
	return append([]string{"--redis", sc.url, "--crawl-id", sc.id, "--report", "json", "--log-format", "json", "--status", "off"}, more...)
}

// queue is the crawl's Colly storage, for the test to inspect its queue.
func (sc sharedCrawl) queue(t *testing.T) *redis.CollyStorage {
	t.Helper()
	cs, err := redis.NewCollyStorage(sc.client, sc.id, redis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// deadLetter makes u a dead letter of the crawl with cause as its last
// error, as a worker would: queued, claimed through Colly's queue, and its
// only attempt failed.
func (sc sharedCrawl) deadLetter(t *testing.T, u, cause string) {
	t.Helper()
	cs, err := redis.NewCollyStorage(sc.client, sc.id, redis.Config{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	c := colly.NewCollector()
	cs.Register(c)
	c.OnRequest(func(r *colly.Request) {
		if err := cs.Fail(r, errors.New(cause)); err != nil {
			t.Error(err)
		}
		r.Abort()
	})
	q, err := queue.New(1, cs)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.AddURL(u); err != nil {
		t.Fatal(err)
	}
	if err := q.Run(c); err != nil {
		t.Fatal(err)
	}
	if st, err := cs.Stats(context.Background()); err != nil || st.Dead != 1 || st.Pending() != 0 {
		t.Fatalf("planting a dead letter: %+v, %v; want one dead, nothing pending", st, err)
	}
}

// runWorkers runs n productcrawl processes at once, each in a directory of
// its own (so each has its own products.jsonl), and waits for them all.
func runWorkers(t *testing.T, n int, args ...string) []result {
	t.Helper()
	type proc struct {
		cmd            *exec.Cmd
		stdout, stderr *bytes.Buffer
	}
	var procs []proc
	for range n {
		cmd, stdout, stderr := crawlCmd(t, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, proc{cmd, stdout, stderr})
	}
	var out []result
	for _, p := range procs {
		err := p.cmd.Wait()
		out = append(out, finish(t, p.cmd, err, p.stdout, p.stderr))
	}
	return out
}

// unionOnce reads every worker's products.jsonl (each checked line by line
// by products) and fails if a URL is in two files. It returns the union.
func unionOnce(t *testing.T, rs []result, stores ...*testserver.Store) map[string]bool {
	t.Helper()
	all := map[string]bool{}
	for i, r := range rs {
		for _, p := range products(t, filepath.Join(r.dir, "products.jsonl"), stores...) {
			if all[p.URL] {
				t.Errorf("%s is in more than one worker's file (worker %d's among them)", p.URL, i)
			}
			all[p.URL] = true
		}
	}
	return all
}

// eachPageOnce fails for a page a store answered healthy more than once:
// the shared visited set lets one worker fetch each URL.
func eachPageOnce(t *testing.T, stores ...*testserver.Store) {
	t.Helper()
	for _, s := range stores {
		n := map[string]int{}
		for _, h := range s.Requests() {
			if h.Mode == testserver.Healthy {
				n[h.Path]++
			}
		}
		for p, c := range n {
			if c > 1 {
				t.Errorf("%s%s was fetched %d times, want once across the workers", s.URL(), p, c)
			}
		}
	}
}

// transitions counts the breaker_transition events to state to for domain
// in a worker's log.
func transitions(t *testing.T, stderr, domain, to string) int {
	t.Helper()
	n := 0
	sc := bufio.NewScanner(strings.NewReader(stderr))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct{ Event, Domain, To string }
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "breaker_transition" && ev.Domain == domain && ev.To == to {
			n++
		}
	}
	return n
}

// plainProfile writes a profiles file whose default is standard's circuit
// without its latency rules, which a loaded 2-core machine running three
// crawlers could move.
func plainProfile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "profiles.yaml")
	yaml := "breaker_profiles:\n  plain:\n    window_size: 20\n    failure_threshold: 0.5\n    cooldown_seconds: 60\n    half_open_probes: 2\ndefault: plain\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func startFleet(t *testing.T, cfgs ...testserver.Config) *testserver.Fleet {
	t.Helper()
	f, err := testserver.StartFleet(cfgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func startURLs(f *testserver.Fleet) []string {
	var out []string
	for _, s := range f.Stores {
		out = append(out, s.URL()+"/")
	}
	return out
}

const (
	fleetStores   = 5
	fleetProducts = 60
	fleetPerPage  = 20 // three listing pages a store: its products are found as the crawl goes
	fleetWorkers  = 3
	fleetParallel = 2
	fleetLatency  = 20 * time.Millisecond // so the crawl lasts long enough for every worker to take part
)

// Three workers, one healthy fleet: every product once across their
// files, every page fetched once, every worker complete.
func TestRedisWorkersShareAHealthyCrawl(t *testing.T) {
	sc := newSharedCrawl(t)
	cfgs := make([]testserver.Config, fleetStores)
	for i := range cfgs {
		cfgs[i] = testserver.Config{Products: fleetProducts, PerPage: fleetPerPage, Scenario: testserver.Scenario{Latency: fleetLatency}}
	}
	f := startFleet(t, cfgs...)
	rs := runWorkers(t, fleetWorkers, sc.args(append([]string{"--profiles", plainProfile(t), "--parallelism", itoa(fleetParallel)}, startURLs(f)...)...)...)

	var records int64
	for i, r := range rs {
		if r.code != 0 {
			t.Errorf("worker %d: exit %d, want 0 (complete)\nstdout:\n%s\nstderr:\n%.3000s", i, r.code, r.stdout, r.stderr)
			continue
		}
		rep := r.report(t)
		if rep.Outcome.State != "complete" || rep.Outcome.Records == 0 {
			t.Errorf("worker %d: outcome %+v, want complete with records of its own", i, rep.Outcome)
		}
		records += rep.Outcome.Records
	}
	got := unionOnce(t, rs, f.Stores...)
	for _, s := range f.Stores {
		for n := 1; n <= fleetProducts; n++ {
			if !got[s.ProductURL(n)] {
				t.Errorf("%s is in no worker's file", s.ProductURL(n))
			}
		}
	}
	if want := fleetStores * fleetProducts; len(got) != want || records != int64(want) {
		t.Errorf("%d products in the files, %d records reported, want %d of each", len(got), records, want)
	}
	eachPageOnce(t, f.Stores...)
	if st, err := sc.queue(t).Stats(context.Background()); err != nil || st.Pending() != 0 || st.Dead != 0 {
		t.Errorf("the crawl's queue after the run: %+v (%v), want nothing left", st, err)
	}
	// A worker run again finds the crawl done: it sends nothing.
	before := f.Count()
	r := runCrawl(t, sc.args(append([]string{"--profiles", plainProfile(t)}, startURLs(f)...)...)...)
	if r.code != 3 || f.Count() != before {
		t.Errorf("a worker started after the crawl was done: exit %d, %d requests sent; want 3 (empty: nothing of its own) and none", r.code, f.Count()-before)
	}
	t.Logf("records per worker: %v", func() (out []int64) {
		for _, r := range rs {
			out = append(out, r.report(t).Outcome.Records)
		}
		return
	}())
}

// Three workers, one store degrading: its circuit, shared, trips once for
// all of them, and the requests sent into the degradation stay within
// what one breaker allows plus every worker's requests in flight to it.
// Every product fetched healthy is in exactly one file, and every worker
// ends tripped: the degraded store's URLs wait in Redis for the next run.
func TestRedisWorkersShareATrip(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	sc := newSharedCrawl(t)
	cfgs := make([]testserver.Config, fleetStores)
	for i := range cfgs {
		cfgs[i] = testserver.Config{Products: fleetProducts, PerPage: fleetPerPage, Scenario: testserver.Scenario{Latency: fleetLatency}}
	}
	cfgs[0].Scenario = testserver.Scenario{Mode: testserver.Degrade, After: 25, Latency: fleetLatency}
	f := startFleet(t, cfgs...)
	bad := f.Stores[0]
	// -wait-horizon 0: the 503s' retries (a backoff of up to 15 s, after
	// which they would only be parked) are not waited for.
	rs := runWorkers(t, fleetWorkers, sc.args(append([]string{"--profiles", plainProfile(t), "--parallelism", itoa(fleetParallel),
		"--wait-horizon", "0"}, startURLs(f)...)...)...)

	trips := 0
	for i, r := range rs {
		trips += transitions(t, r.stderr, bad.Host(), "open")
		if r.code != 2 {
			t.Errorf("worker %d: exit %d, want 2 (tripped)\nstdout:\n%s\nstderr:\n%.3000s", i, r.code, r.stdout, r.stderr)
			continue
		}
		rep := r.report(t)
		if rep.Outcome.State != "tripped" || !rep.hasFinding("unfinished", "") {
			t.Errorf("worker %d: outcome %+v, want tripped with the crawl's unfinished URLs", i, rep.Outcome)
		}
		for _, fd := range rep.Outcome.Findings {
			if fd.Kind == "circuit_open" && !slices.Equal(fd.Domains, []string{bad.Host()}) {
				t.Errorf("worker %d: circuits open for %v, want only %s's", i, fd.Domains, bad.Host())
			}
		}
	}
	if trips != 1 {
		t.Errorf("%s's circuit opened %d times across the workers' logs, want once: it is shared", bad.Host(), trips)
	}
	p := plainCircuit()
	// The request that trips the circuit is one of those in flight.
	bound := p.Settings().FailuresToTrip() + fleetWorkers*fleetParallel - 1
	if sent := bad.SentAfterFailing(); sent < p.Settings().FailuresToTrip() || sent > bound {
		t.Errorf("%d requests sent into the degradation, want between %d and %d (window × threshold + workers × parallelism − 1)",
			sent, p.Settings().FailuresToTrip(), bound)
	}
	got := unionOnce(t, rs, f.Stores...)
	want := map[string]bool{}
	for _, s := range f.Stores {
		for u := range healthyProducts(s) {
			want[u] = true
			if !got[u] {
				t.Errorf("%s was fetched healthy but is in no worker's file", u)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d products in the files, %d fetched healthy: want the same", len(got), len(want))
	}
	for _, s := range f.Stores[1:] {
		for n := 1; n <= fleetProducts; n++ {
			if !got[s.ProductURL(n)] {
				t.Errorf("%s, of a healthy store, is in no worker's file", s.ProductURL(n))
			}
		}
	}
	eachPageOnce(t, f.Stores...)
	st, err := sc.queue(t).Stats(context.Background())
	// Waiting: delayed, or ready since (a retry's jittered backoff can be
	// short enough to fall due between the workers' end and this look:
	// Stats counts a due delayed job as ready). Never in flight.
	if err != nil || st.Delayed+st.Ready == 0 || st.InFlight != 0 || st.Dead != 0 {
		t.Errorf("the crawl's queue after the run: %+v (%v), want the degraded store's URLs waiting, nothing else", st, err)
	}
	t.Logf("%d sent into the degradation (bound %d); queue left %+v", bad.SentAfterFailing(), bound, st)
}

// plainCircuit is plainProfile's default.
func plainCircuit() breaker.Profile {
	return breaker.Profile{Name: "plain", WindowSize: 20, FailureThreshold: 0.5, Cooldown: time.Minute, HalfOpenProbes: 2}
}

// A worker stopped by SIGTERM ends tripped and gives back what it had not
// sent; the same command run again, in the same directory, finishes the
// crawl: every product once in its -out, which it continued.
func TestRedisCrawlContinuesAfterAStop(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	sc := newSharedCrawl(t)
	s := startStore(t, testserver.Config{Products: 120, PerPage: 40, Scenario: testserver.Scenario{Latency: 30 * time.Millisecond}})
	args := sc.args("--profiles", plainProfile(t), "--parallelism", "2", s.URL()+"/")
	dir := t.TempDir()
	cmd, stdout, stderr := crawlCmdIn(t, dir, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.CountMode(testserver.Healthy) < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("the crawl did not get going:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	first := finish(t, cmd, cmd.Wait(), stdout, stderr)
	if first.code != 2 || !first.report(t).hasFinding("interrupted", "") {
		t.Fatalf("stopped worker: exit %d, want 2 (tripped: interrupted)\nstdout:\n%s\nstderr:\n%s", first.code, first.stdout, first.stderr)
	}
	if st, err := sc.queue(t).Stats(context.Background()); err != nil || st.InFlight != 0 || st.Pending() == 0 {
		t.Fatalf("the crawl's queue after the stop: %+v (%v), want work left and nothing held by the stopped worker", st, err)
	}
	before := first.report(t).Outcome.Records
	second := runCrawlIn(t, dir, args...)
	if second.code != 0 {
		t.Fatalf("the same command again: exit %d, want 0 (complete)\nstdout:\n%s\nstderr:\n%s", second.code, second.stdout, second.stderr)
	}
	got := unionOnce(t, []result{second}, s) // one file: products fails on a URL written twice
	for n := 1; n <= 120; n++ {
		if !got[s.ProductURL(n)] {
			t.Errorf("%s is not in the file", s.ProductURL(n))
		}
	}
	if rep := second.report(t); rep.Outcome.Records != 120 || before == 0 || before == 120 {
		t.Errorf("records: %d at the stop, %d after the second run; want some, then all 120 (the file's earlier lines count)", before, rep.Outcome.Records)
	}
	eachPageOnce(t, s)
}

// Redis that does not answer at start is an error (exit 1) within
// -timeout, before anything is sent: a closed port, and a listener that
// accepts and never answers.
func TestRedisUnreachableAtStartIsAnError(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	store := startStore(t, testserver.Config{Products: 5})
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // never answered
		}
	}()
	for _, addr := range []string{closedAddr, silent.Addr().String()} {
		began := time.Now()
		r := runCrawl(t, "--redis", "redis://"+addr+"/0", "--timeout", "1s", "--log-format", "json", store.URL()+"/")
		took := time.Since(began)
		if r.code != 1 || !strings.Contains(r.stderr, "cannot reach Redis at "+addr) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant 1 and a message naming the Redis", addr, r.code, r.stderr)
		}
		if took > 15*time.Second {
			t.Errorf("%s: took %v to give up, want about -timeout (1s)", addr, took)
		}
	}
	if store.Count() != 0 {
		t.Errorf("the store received %d requests, want none", store.Count())
	}
}

func TestRedisFlagsAreCheckedBeforeAnyRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	store := startStore(t, testserver.Config{Products: 5})
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--redis", "http://127.0.0.1:6379"}, "-redis"},
		{[]string{"--redis", "redis+cluster://127.0.0.1"}, "-redis: redis cluster URL"},
		{[]string{"--redis", "redis+cluster://127.0.0.1:7000/2"}, "only database 0"},
		{[]string{"--redis", "redis://127.0.0.1:6379/0", "--checkpoint", "crawl.db"}, "-checkpoint: not with -redis"},
		{[]string{"--redis", "redis://127.0.0.1:6379/0", "--resume"}, "--resume: not with -redis"},
		{[]string{"--redis", "redis://127.0.0.1:6379/0", "--max-pages", "5"}, "-max-pages: not with -redis"},
		{[]string{"--redis", "redis://127.0.0.1:6379/0", "--crawl-id", "shop{1}"}, "-crawl-id"},
		{[]string{"--redis", "redis://127.0.0.1:6379/0", "--crawl-id", "shop *"}, "-crawl-id"},
		{[]string{"--redis", "redis://127.0.0.1:6379/0", "--wait-horizon", "-1s"}, "-wait-horizon"},
		{[]string{"--crawl-id", "shop"}, "give -redis too"},
		{[]string{"--wait-horizon", "1m"}, "only with -redis"},
		{[]string{"--redis-shards", "3"}, "only with -redis"},
		{[]string{"--redis", "redis://127.0.0.1:6379/0", "--redis-shards", "0"}, "-redis-shards 0"},
	} {
		r := runCrawl(t, append(tc.args, store.URL()+"/")...)
		if r.code != 64 || !strings.Contains(r.stderr, tc.says) || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q: want 64 and a message saying %q", tc.args, r.code, r.stderr, tc.says)
		}
	}
	if store.Count() != 0 {
		t.Errorf("the store received %d requests from runs with bad flags, want 0", store.Count())
	}
}

// The crawl id defaults to one derived from the start URLs, the same
// whatever their order, so workers given the same URLs share a crawl.
func TestDefaultCrawlIDIsTheSameForTheSameStartURLs(t *testing.T) {
	a := defaultCrawlID([]string{"https://shop.example:8443/", "https://other.example/"})
	b := defaultCrawlID([]string{"https://other.example/", "https://shop.example:8443/"})
	c := defaultCrawlID([]string{"https://shop.example:8443/"})
	if a != b || a == c {
		t.Errorf("ids %q, %q, %q: want the first two equal, the third different", a, b, c)
	}
	for _, id := range []string{a, c} {
		if err := checkCrawlID(id); err != nil || !strings.HasPrefix(id, "productcrawl-") {
			t.Errorf("id %q: %v", id, err)
		}
	}
	if _, err := redis.NewCollyStorage(goredis.NewClient(&goredis.Options{}), a, redis.Config{}); err != nil {
		t.Errorf("storage/redis refuses the derived id %q: %v", a, err)
	}
}

// --dead-letters with -redis lists the crawl's dead letters with their
// last error.
func TestRedisDeadLettersAreListed(t *testing.T) {
	sc := newSharedCrawl(t)
	const dead = "http://127.0.0.1:1/products/sku-7"
	sc.deadLetter(t, dead, "degraded (HTTP 503)")
	r := runCrawl(t, "--dead-letters", "--redis", sc.url, "--crawl-id", sc.id)
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("1 dead URLs in crawl %s", sc.id)) ||
		!strings.Contains(r.stdout, dead) || !strings.Contains(r.stdout, "HTTP 503") {
		t.Errorf("--dead-letters: exit %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and the dead URL with its last error", r.code, r.stdout, r.stderr)
	}
	if r := runCrawl(t, "--dead-letters", "--redis", sc.url); r.code != 64 || !strings.Contains(r.stderr, "-crawl-id") {
		t.Errorf("--dead-letters -redis without a crawl id: exit %d, stderr %q; want 64 asking for -crawl-id", r.code, r.stderr)
	}
}

// ownRedis is a redis-server of a test's own on a free loopback port, for
// the tests that stop, kill and start it again without touching the Redis
// other tests share. A durable one persists every write (append-only
// file, synced on each), so a restart keeps the crawl; a volatile one
// persists nothing, so a restart comes back empty.
type ownRedis struct {
	t       *testing.T
	path    string
	addr    string
	dir     string
	durable bool
	server  *exec.Cmd
}

// startOwnRedis starts the server. Without redis-server on PATH the test
// is skipped, or fails under CI (CI=true), which must never skip it.
func startOwnRedis(t *testing.T, durable bool) *ownRedis {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		const why = "no redis-server on PATH to stop and start again"
		if os.Getenv("CI") == "true" {
			t.Fatal(why + "; CI must run this test: install redis-server (.ci/run does)")
		}
		t.Skip(why)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &ownRedis{t: t, path: path, addr: l.Addr().String(), dir: t.TempDir(), durable: durable}
	l.Close()
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *ownRedis) url() string { return "redis://" + r.addr + "/0" }

func (r *ownRedis) start() {
	r.t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	persist := []string{"--appendonly", "yes", "--appendfsync", "always"}
	if !r.durable {
		persist = []string{"--appendonly", "no"}
	}
	args := append([]string{"--port", port, "--bind", "127.0.0.1", "--save", ""}, persist...)
	r.server = exec.Command(r.path, append(args, "--dir", r.dir, "--daemonize", "no", "--loglevel", "warning")...)
	if err := r.server.Start(); err != nil {
		r.t.Fatal(err)
	}
	client := goredis.NewClient(&goredis.Options{Addr: r.addr, MaxRetries: -1})
	defer client.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on %s did not answer: %v", r.addr, err)
		}
	}
}

// stop ends the server with SIGTERM and waits for it.
func (r *ownRedis) stop() {
	if r.server != nil {
		_ = r.server.Process.Signal(syscall.SIGTERM)
		_ = r.server.Wait()
		r.server = nil
	}
}

// kill ends the server with SIGKILL, as a crash or the OOM killer would.
func (r *ownRedis) kill() {
	if r.server != nil {
		_ = r.server.Process.Kill()
		_ = r.server.Wait()
		r.server = nil
	}
}

// midCrawl is two productcrawl workers on srv's Redis crawling a store of
// 120 products at 30 ms a page, started and past their 30th page.
type midCrawl struct {
	store *testserver.Store
	args  []string
	procs []workerProc
}

type workerProc struct {
	cmd            *exec.Cmd
	stdout, stderr *bytes.Buffer
}

func startMidCrawl(t *testing.T, srv *ownRedis) *midCrawl {
	t.Helper()
	s := startStore(t, testserver.Config{Products: 120, PerPage: 40, Scenario: testserver.Scenario{Latency: 30 * time.Millisecond}})
	m := &midCrawl{store: s, args: []string{"--redis", srv.url(), "--report", "json", "--log-format", "json", "--status", "off",
		"--profiles", plainProfile(t), "--parallelism", "2", s.URL() + "/"}}
	for range 2 {
		cmd, stdout, stderr := crawlCmd(t, m.args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		m.procs = append(m.procs, workerProc{cmd, stdout, stderr})
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.CountMode(testserver.Healthy) < 30 {
		if time.Now().After(deadline) {
			t.Fatal("the crawl did not get going")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return m
}

// wait waits for every worker and returns their results.
func (m *midCrawl) wait(t *testing.T) []result {
	t.Helper()
	var rs []result
	for _, p := range m.procs {
		err := p.cmd.Wait()
		rs = append(rs, finish(t, p.cmd, err, p.stdout, p.stderr))
	}
	return rs
}

// Redis stopped and started again in the middle of a crawl: the workers
// pause (nothing is lost, nothing is fetched twice) and then finish it.
// The test runs a redis-server of its own, persisting every write, so
// that it can stop it without touching the Redis other tests share.
func TestRedisRestartedMidCrawlPausesTheWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	srv := startOwnRedis(t, true)
	m := startMidCrawl(t, srv)
	s := m.store
	srv.stop()
	down := s.Count()
	time.Sleep(2500 * time.Millisecond) // longer than go-redis's own retries of a command
	if sent := s.Count() - down; sent > 2*2 {
		t.Errorf("%d requests sent while Redis was down, want at most those already in flight (4)", sent)
	}
	srv.start()
	rs := m.wait(t)
	noticed := 0
	for i, r := range rs {
		if r.code != 0 {
			t.Errorf("worker %d: exit %d, want 0 (complete)\nstderr:\n%.4000s", i, r.code, r.stderr)
		}
		// A worker whose calls all fell in go-redis's own retries saw no
		// outage at all.
		if strings.Contains(r.stderr, `"event":"redis_recovered"`) {
			noticed++
		}
	}
	if noticed == 0 {
		t.Error("no worker logged redis_recovered: the outage went unnoticed, the test proves nothing")
	}
	got := unionOnce(t, rs, s)
	for n := 1; n <= 120; n++ {
		if !got[s.ProductURL(n)] {
			t.Errorf("%s is in no worker's file", s.ProductURL(n))
		}
	}
	eachPageOnce(t, s)
}

// Redis without persistence is killed in the middle of a two-worker crawl
// and comes back empty: the queue, the visited set and the leases are
// gone. No worker may drain the empty queue and exit 0 "complete" with
// products missing: each ends error (exit 1), its run_finished line saying
// that the crawl's shared state was lost. A worker started afterwards
// (a fleet scaling up, a restart) must not take the emptied Redis for a
// new crawl and fetch everything again: it ends error too, saying to purge
// the crawl, and fetches nothing.
func TestRedisLostMidCrawlEndsInError(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	srv := startOwnRedis(t, false)
	m := startMidCrawl(t, srv)
	srv.kill()
	srv.start()
	for i, r := range m.wait(t) {
		end := finishedLine(r.stderr)
		if r.code != 1 || !strings.Contains(end, `"state":"error"`) || !strings.Contains(end, "shared state in Redis was lost") {
			t.Errorf("worker %d: exit %d, run_finished %s\nwant 1 (error) and a reason saying the shared state was lost\nstderr:\n%.4000s", i, r.code, end, r.stderr)
		}
	}
	before := m.store.Count()
	late := runCrawl(t, m.args...)
	if end := finishedLine(late.stderr); late.code != 1 || !strings.Contains(end, "lost its shared state in Redis") || !strings.Contains(late.stderr, "--redis-purge") {
		t.Errorf("a worker started after the loss: exit %d, run_finished %s\nwant 1 (error), its ending saying the state was lost, and to purge the crawl\nstderr:\n%.4000s", late.code, end, late.stderr)
	}
	if n := m.store.Count() - before; n != 0 {
		t.Errorf("the worker started after the loss sent %d requests, want none: it took the emptied Redis for a new crawl", n)
	}
}

// finishedLine is the run_finished line of a worker's JSON log.
func finishedLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, `"event":"run_finished"`) {
			return l
		}
	}
	return ""
}

// A crawl in Redis with dead letters does not end complete: the URLs died
// of failures, their attempts spent, and a person decides (exit 1, as with
// the checkpoint file). Found by the chaos suite: three workers all ended
// complete while the one start URL of a site hanging from the start had
// died in the dead-letter set.
func TestRedisCrawlWithDeadLettersIsAnError(t *testing.T) {
	sc := newSharedCrawl(t)
	s := startStore(t, testserver.Config{Products: 6, PerPage: 6})
	sc.deadLetter(t, s.URL()+"/products/sku-9999", "degraded (timeout)")
	r := runCrawl(t, sc.args("--report", "json", s.URL()+"/")...)
	if r.code != 1 || !r.report(t).hasFinding("dead", "") {
		t.Errorf("a crawl with a dead letter: exit %d, want 1 with a dead finding\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
