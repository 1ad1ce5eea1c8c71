// Package shapetest runs a scraper shape as its user runs it: against a
// testserver store on 127.0.0.1 that degrades mid-crawl, run after run over
// the same checkpoint file, each run with fresh collectors, breaker and
// checkpoint as a new process would have. It judges from the outside only:
// the store's request log, the products file, the exit code.
package shapetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/rs/zerolog"
)

// Env is what one run of a shape is given: what its main would read from
// the command line and the machine.
type Env struct {
	Start  string         // the start URL
	Ckpt   string         // the checkpoint file, the same across runs
	Dir    string         // a folder of the crawl's own, the same across runs (a cache)
	Clock  *Later         // the machine's clock
	Log    zerolog.Logger // the program's log
	Out    io.Writer      // the products file, one JSON line per product
	Report io.Writer      // where the ending's report goes
}

// Shape is a scraper under test.
type Shape struct {
	// Store is the store's configuration; its Scenario is the
	// degradation of the first run (healed before the second).
	Store testserver.Config
	// Start is the start path ("/" when empty).
	Start string
	// Parallelism is the most requests the shape has in flight to the
	// store: the trip's bound is FailuresToTrip + Parallelism − 1.
	Parallelism int
	// Want returns the paths of the products the crawl must write; nil
	// means every product of the store.
	Want func() []string
	// Run is one run: a new process.
	Run func(Env) (int, error)
	// CheckRun, if set, judges a run's log.
	CheckRun func(t *testing.T, run int, log string)
}

// Later is the machine's clock, which a test can move on between runs:
// wall time plus the time skipped, so that a rerun comes after the
// tripped domain's cooldown without the test waiting for it.
type Later struct {
	mu      sync.Mutex
	skipped time.Duration
}

// Now returns the wall time plus what was skipped.
func (l *Later) Now() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Now().Add(l.skipped)
}

// After waits d of wall time.
func (l *Later) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	time.AfterFunc(d, func() { ch <- l.Now() })
	return ch
}

// Skip moves the clock on by d, as the time between two runs.
func (l *Later) Skip(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.skipped += d
}

// Crawl is a shape's files and store across runs.
type Crawl struct {
	t     *testing.T
	Shape Shape
	Store *testserver.Store
	Dir   string // the crawl's folder (cache)
	Ckpt  string // the checkpoint file
	Clock *Later
	Runs  int
}

// New starts the shape's store and the crawl's files in t.TempDir().
func New(t *testing.T, sh Shape) *Crawl {
	t.Helper()
	store, err := testserver.Start(sh.Store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	dir := t.TempDir()
	return &Crawl{t: t, Shape: sh, Store: store, Dir: filepath.Join(dir, "cache"),
		Ckpt: filepath.Join(dir, "crawl.db"), Clock: &Later{}}
}

// Run runs the shape once, appending its products to the file out, and
// returns its exit code. A run that errs or does not end within 30 s
// fails the test.
func (c *Crawl) Run(out string) int {
	t := c.t
	t.Helper()
	c.Runs++
	f, err := os.OpenFile(out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var log, rep syncBuffer
	start := c.Shape.Start
	if start == "" {
		start = "/"
	}
	env := Env{Start: c.Store.URL() + start, Ckpt: c.Ckpt, Dir: c.Dir, Clock: c.Clock,
		Log: zerolog.New(&log).Level(zerolog.InfoLevel), Out: f, Report: &rep}
	before, lines := c.Store.Count(), countLines(t, out)
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	began := time.Now()
	go func() {
		code, err := c.Shape.Run(env)
		done <- result{code, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("run %d did not end within 30 s; its log so far:\n%s", c.Runs, log.String())
	}
	t.Logf("run %d: exit %d (err %v) in %v, %d requests to the store, %d products written\nreport:\n%s\nlog (warn and up):\n%s",
		c.Runs, r.code, r.err, time.Since(began).Round(time.Millisecond), c.Store.Count()-before,
		countLines(t, out)-lines, brief(rep.String()), warnings(log.String()))
	if r.err != nil {
		t.Errorf("run %d: %v", c.Runs, r.err)
	}
	if c.Shape.CheckRun != nil {
		c.Shape.CheckRun(t, c.Runs, log.String())
	}
	return r.code
}

// DegradeHealRerun is the sequence a user goes through: (a) the store
// degrades in the first run, which must trip (exit 2) within the bound;
// the store is healed, and reruns (after the cooldown) must complete
// (exit 0), every product written exactly once across the runs, no page
// answered 200 twice; (b) a rerun after complete sends nothing and is
// complete again. It returns the crawl and the products file.
func DegradeHealRerun(t *testing.T, sh Shape) (*Crawl, string) {
	t.Helper()
	c := New(t, sh)
	out := filepath.Join(t.TempDir(), "products.jsonl")

	// (a) The store degrades mid-crawl: the first run trips.
	if code := c.Run(out); code != 2 {
		t.Errorf("(a) run 1 on a store degrading mid-crawl: exit %d, want 2 (tripped)", code)
	}
	if _, seq := c.Store.FailingSince(); seq == 0 {
		t.Fatalf("(a) the store never failed in run 1 (%d requests): the test proves nothing", c.Store.Count())
	}
	need := breaker.Standard().Settings().FailuresToTrip()
	if got, bound := c.Store.SentAfterFailing(), need+sh.Parallelism-1; got > bound {
		t.Errorf("(a) run 1 sent %d requests into the degradation, want at most %d (need %d + parallelism %d − 1)",
			got, bound, need, sh.Parallelism)
	}
	if lines := countLines(t, out); lines == 0 {
		t.Errorf("(a) run 1 wrote no product before the store degraded: the test proves nothing of a resume")
	}

	// Healed, and later: reruns until complete.
	if err := c.Store.SetScenario(testserver.Scenario{}); err != nil {
		t.Fatal(err)
	}
	code := 2
	for rerun := 1; rerun <= 3 && code == 2; rerun++ {
		c.Clock.Skip(15 * time.Minute) // past any cooldown (Standard: at most 10 minutes)
		code = c.Run(out)
		if code != 0 && code != 2 {
			t.Errorf("(a) run %d on the healed store: exit %d, want 0 (complete) or 2 (tripped, work left)", c.Runs, code)
		}
	}
	if code != 0 {
		t.Errorf("(a) after %d runs on the healed store: exit %d, want 0 (complete)", c.Runs-1, code)
	}
	c.CheckProducts("(a) across the runs", out, c.Want())
	c.CheckNoPageServedTwice("(a)")

	// (b) A rerun after complete sends nothing and stays complete.
	sent, lines := c.Store.Count(), countLines(t, out)
	c.Clock.Skip(time.Minute)
	if code := c.Run(out); code != 0 {
		t.Errorf("(b) a rerun after complete: exit %d, want 0", code)
	}
	if got := c.Store.Count() - sent; got != 0 {
		t.Errorf("(b) a rerun after complete sent %d requests, want none: %v", got, c.Store.Requests()[sent:])
	}
	if got := countLines(t, out) - lines; got != 0 {
		t.Errorf("(b) a rerun after complete wrote %d products, want none", got)
	}
	return c, out
}

// CompleteInOneRun is the sequence of a store that misbehaves for a while
// and recovers by itself (a throttle that lifts): one run completes (exit
// 0), every product written exactly once, no page answered 200 twice.
func CompleteInOneRun(t *testing.T, sh Shape) (*Crawl, string) {
	t.Helper()
	c := New(t, sh)
	out := filepath.Join(t.TempDir(), "products.jsonl")
	if code := c.Run(out); code != 0 {
		t.Errorf("a store that recovers by itself: exit %d, want 0 (complete)", code)
	}
	if _, seq := c.Store.FailingSince(); seq == 0 {
		t.Fatalf("the store never misbehaved (%d requests): the test proves nothing", c.Store.Count())
	}
	c.CheckProducts("one run", out, c.Want())
	c.CheckNoPageServedTwice("one run")
	return c, out
}

// Want returns the paths of the products the crawl must write.
func (c *Crawl) Want() []string {
	if c.Shape.Want != nil {
		return c.Shape.Want()
	}
	var paths []string
	for n := 1; n <= c.Store.Catalog().Len(); n++ {
		paths = append(paths, testserver.ProductPath(n))
	}
	return paths
}

// Record is a line of a products file.
type Record struct {
	URL   string `json:"url"`
	Title string `json:"title"`
}

// CheckProducts checks that the products file out holds each of the
// product paths want exactly once, with its title, and nothing else.
func (c *Crawl) CheckProducts(what, out string, want []string) {
	t := c.t
	t.Helper()
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Errorf("%s: a line that is not a product: %q: %v", what, sc.Text(), err)
			continue
		}
		path := strings.TrimPrefix(r.URL, c.Store.URL())
		seen[path]++
		n, err := strconv.Atoi(strings.TrimPrefix(path, "/products/sku-"))
		if err != nil || testserver.ProductPath(n) != path {
			t.Errorf("%s: a product with the URL %q, not a product page of the store", what, r.URL)
		} else if r.Title != testserver.Title(n) {
			t.Errorf("%s: %s written with the title %q, want %q", what, path, r.Title, testserver.Title(n))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var missing, twice []string
	for _, p := range want {
		switch seen[p] {
		case 0:
			missing = append(missing, p)
		case 1:
		default:
			twice = append(twice, fmt.Sprintf("%s ×%d", p, seen[p]))
		}
	}
	wanted := map[string]bool{}
	for _, p := range want {
		wanted[p] = true
	}
	var extra []string
	for _, p := range slices.Sorted(maps.Keys(seen)) {
		if !wanted[p] {
			extra = append(extra, p)
		}
	}
	if len(missing)+len(twice)+len(extra) > 0 {
		t.Errorf("%s: %d products written, want each of %d exactly once: %d missing %v; %d more than once %v; %d not wanted %v",
			what, sum(seen), len(want), len(missing), missing, len(twice), twice, len(extra), extra)
	}
}

// CheckNoPageServedTwice checks the store's log: no page was answered 200
// more than once (a done page is never fetched again).
func (c *Crawl) CheckNoPageServedTwice(what string) {
	c.t.Helper()
	ok := map[string]int{}
	for _, h := range c.Store.Requests() {
		if h.Status == 200 && h.Mode == testserver.Healthy {
			ok[h.Path]++
		}
	}
	var twice []string
	for _, p := range slices.Sorted(maps.Keys(ok)) {
		if ok[p] > 1 {
			twice = append(twice, fmt.Sprintf("%s ×%d", p, ok[p]))
		}
	}
	if len(twice) > 0 {
		c.t.Errorf("%s: pages answered 200 more than once across the runs: %v", what, twice)
	}
}

// Lines returns the number of lines of the file path (0 if absent).
func Lines(t *testing.T, path string) int { return countLines(t, path) }

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// brief returns the report without its legend of the columns.
func brief(report string) string {
	var b strings.Builder
	legend := false
	for l := range strings.SplitSeq(strings.TrimRight(report, "\n"), "\n") {
		switch {
		case l == "columns:":
			legend = true
			continue
		case legend && strings.HasPrefix(l, "  "):
			continue
		}
		legend = false
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// warnings returns the log's lines at warn level and up, at most 40.
func warnings(log string) string {
	var b strings.Builder
	n := 0
	for l := range strings.SplitSeq(log, "\n") {
		if strings.Contains(l, `"level":"warn"`) || strings.Contains(l, `"level":"error"`) {
			if n++; n <= 40 {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
	}
	if n > 40 {
		fmt.Fprintf(&b, "… %d more\n", n-40)
	}
	return b.String()
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
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
