package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bw "github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// childEnv names the spec file of a run when this binary is started as a
// program case's program (childMain) rather than as the suite.
const childEnv = "CHAOS_CHILD"

// breakEnv turns on, in the program, a deliberate break of one promise,
// so that a test can show the invariant guarding it reports the break:
//
//	twice          every product is written twice (invariant 10)
//	exit2          every run exits 2, whatever it decided (invariant 11)
//	drop           the first product of each run is not written, the run ending as decided (invariant 12)
//	crash0         a panic on the main goroutine is recovered and the run exits 0 (invariant 13)
//	noreport       a run prints no report (invariant 13, for a run sent SIGTERM)
//	onerror-first  the user's OnError runs for the first request before the user's OnRequest (invariant 14)
const breakEnv = "CHAOS_BREAK"

func breakIs(name string) bool { return os.Getenv(breakEnv) == name }

// childSpec is what one run of a program is told.
type childSpec struct {
	Program Program
	Profile string // the profile's name; the program's Cooldown shortens it
	Timeout time.Duration
	URLs    []string
	Dir     string // the case's files: crawl.db, products.jsonl, cache/, events.log
	Run     int    // 1 for the sequence's first run
	Resume  bool
}

// productRec is one product the program writes: a JSON line.
type productRec struct {
	URL     string `json:"url"`
	Title   string `json:"title"`
	Listing string `json:"listing,omitempty"` // shCtxChain: the Ctx value its listing put
}

// childMain runs one run of a program case's program, as its spec file
// says, and returns the process's exit code.
func childMain(specPath string) int {
	b, err := os.ReadFile(specPath)
	var sp childSpec
	if err == nil {
		err = json.Unmarshal(b, &sp)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos-child: read spec %s: %v\n", specPath, err)
		return 64
	}
	return superviseMain(func(ctx context.Context) int { return runProgram(ctx, sp, os.Stdout, os.Stderr) })
}

// superviseMain is the program's main around run: the one place where its
// process is supervised. It is the README's: breakwater.Main, so a crash
// (a panic, SIGQUIT) exits 1 and SIGINT or SIGTERM cancel run's context
// (Colly's StdlibContext): the run ends interrupted with its report.
func superviseMain(run func(ctx context.Context) int) int {
	bw.Main(func(ctx context.Context) int {
		if breakIs("crash0") {
			defer func() {
				if r := recover(); r != nil {
					fmt.Fprintf(os.Stderr, "panic: %v [recovered by the break crash0]\n", r)
					os.Exit(0)
				}
			}()
		}
		code := run(ctx)
		if breakIs("exit2") {
			return 2
		}
		return code
	})
	return 1 // Main exits; not reached
}

// productSink is where the program writes its products: the one place
// products are written. It is the README's: the checkpoint's Sink over the
// program's JSON-lines file, so each product is in it once across kills,
// resumes and crashes.
type productSink struct {
	mu      sync.Mutex
	f       *os.File
	w       io.Writer // f, or f killed in the middle of a write
	cs      *checkpoint.Sink
	dropped bool
}

func openSink(path string, midWrite int) (*productSink, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the products file: %w", err)
	}
	s := &productSink{f: f, w: f}
	if midWrite > 0 {
		s.w = &killingFile{File: f, at: midWrite}
	}
	return s, nil
}

// attach makes the checkpoint's Sink over the file: it mends what a
// kill left (a torn last line, records committed but not yet written).
func (s *productSink) attach(cp *checkpoint.Checkpoint) error {
	cs, err := cp.Sink(s.w, checkpoint.SinkConfig{})
	if err != nil {
		return fmt.Errorf("the products file: %w", err)
	}
	s.cs = cs
	return nil
}

// writeProduct writes one product to s, for the page r.
func writeProduct(s *productSink, r *colly.Request, rec productRec) error {
	s.mu.Lock()
	if breakIs("drop") && !s.dropped {
		s.dropped = true
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	n := 1
	if breakIs("twice") {
		n = 2
	}
	for range n {
		if err := s.cs.Write(r, rec); err != nil {
			return fmt.Errorf("write product %s: %w", rec.URL, err)
		}
	}
	return nil
}

func (s *productSink) close() error { return s.f.Close() }

// killingFile is the sequence's SIGKILL in the middle of a write: its
// at-th Write writes half its bytes, then the process is killed. It is
// the file otherwise, so the Sink can read it back.
type killingFile struct {
	*os.File
	at int
	mu sync.Mutex
	n  int
}

func (k *killingFile) Write(b []byte) (int, error) {
	k.mu.Lock()
	k.n++
	n := k.n
	k.mu.Unlock()
	if n != k.at {
		return k.File.Write(b)
	}
	_, _ = k.File.Write(b[:len(b)/2])
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the kill is on its way
}

// events is the program's log of what its callbacks saw that the
// invariants read: one line a event, "run=N kind url detail".
type events struct {
	mu  sync.Mutex
	f   *os.File
	run int
}

func (e *events) add(kind, u, detail string) {
	if e.f == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	fmt.Fprintf(e.f, "run=%d %s %s %q\n", e.run, kind, u, detail)
}

func profileNamed(name string) breaker.Profile {
	switch name {
	case breaker.Conservative().Name:
		return breaker.Conservative()
	case breaker.Aggressive().Name:
		return breaker.Aggressive()
	}
	return breaker.Standard()
}

// cacheFile is where Colly's CacheDir keeps u (http_backend.go's Cache).
func cacheFile(dir, u string) string {
	sum := sha1.Sum([]byte(u))
	h := hex.EncodeToString(sum[:])
	return filepath.Join(dir, h[:2], h)
}

// runProgram is the user's program: a product crawl shaped as sp.Program
// says, wired with Breakwater as its docs say, its products written by
// writeProduct. It returns the exit code of the outcome it decided.
func runProgram(ctx context.Context, sp childSpec, stdout, stderr io.Writer) int {
	p, dir := sp.Program, sp.Dir
	// From here on the program handles SIGTERM (its main has installed
	// the handler): a signal sent before this line is not judged.
	fmt.Fprintln(stderr, "chaos-child: run started")
	ev := &events{run: sp.Run}
	if f, err := os.OpenFile(filepath.Join(dir, "events.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		ev.f = f
		defer f.Close()
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "chaos-child: %v\n", err)
		o := outcome.Decide(0, outcome.Failed(err))
		return o.State.ExitCode()
	}
	midWrite := 0
	if sp.Run == 1 {
		midWrite = p.MidWrite
	}
	sink, err := openSink(filepath.Join(dir, "products.jsonl"), midWrite)
	if err != nil {
		return fail(err)
	}
	defer sink.close()

	opts := []colly.CollectorOption{colly.StdlibContext(ctx)}
	if p.Async {
		opts = append(opts, colly.Async(true))
	}
	cacheDir := filepath.Join(dir, "cache")
	if p.CacheDir {
		opts = append(opts, colly.CacheDir(cacheDir))
	}
	c := colly.NewCollector(opts...)
	c.SetRequestTimeout(sp.Timeout)
	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.MinBytes(0), validate.Require("ul.products")},
		Pages: []validate.Page{
			{Pattern: "/products/", Checks: []validate.Check{validate.MinBytes(1024), validate.Require(testserver.TitleSelector)}},
		},
	})
	if err != nil {
		return fail(err)
	}
	prof := profileNamed(sp.Profile)
	prof.Cooldown, prof.MaxCooldown = p.Cooldown, p.maxCooldown()
	b, err := breaker.New(breaker.Config{Profile: prof, Validator: v})
	if err != nil {
		return fail(err)
	}
	st, err := bolt.Open(filepath.Join(dir, "crawl.db"))
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	cp, err := checkpoint.New(st, checkpoint.Config{})
	if err != nil {
		return fail(err)
	}
	if err := bw.Use(c, v, b, cp); err != nil {
		cp.Close()
		return fail(err)
	}
	if err := sink.attach(cp); err != nil {
		cp.Close()
		return fail(err)
	}
	detail := c
	if p.Shape == shCloneOnly {
		detail = c.Clone() // wired as c is, right after Clone (the README)
		if err := bw.Use(detail, v, b, cp); err != nil {
			cp.Close()
			return fail(err)
		}
	}
	cols := []*colly.Collector{c}
	if detail != c {
		cols = append(cols, detail)
	}

	// The user's OnRequest and OnError. Every program's OnError checks
	// that its OnRequest saw the request first (invariant 14).
	var asked sync.Map // *colly.Request → the user's OnRequest ran
	var first atomic.Bool
	onRequest := func(r *colly.Request) {
		asked.Store(r, true)
		if p.Shape == shReqErr {
			r.Ctx.Put("started", time.Now().Format(time.RFC3339Nano))
		}
	}
	var triesMu sync.Mutex
	tries := map[string]int{}
	onError := func(r *colly.Response, err error) {
		u := r.Request.URL.String()
		if _, ok := asked.Load(r.Request); !ok {
			ev.add("onerror-before-onrequest", u, fmt.Sprint(err))
		} else if p.Shape == shReqErr && r.Request.Ctx.Get("started") == "" {
			// OnRequest ran, but the value it put is gone.
			ev.add("onerror-without-start", u, fmt.Sprint(err))
		}
		if p.Shape == shRetryCache {
			triesMu.Lock()
			tries[u]++
			n := tries[u]
			triesMu.Unlock()
			if n <= 3 {
				// A cached bad page would be answered again: remove it.
				_ = os.Remove(cacheFile(cacheDir, u))
				_ = r.Request.Retry()
			}
		}
	}
	if breakIs("onerror-first") {
		for _, col := range cols {
			col.OnRequest(func(r *colly.Request) {
				if first.CompareAndSwap(false, true) {
					onError(&colly.Response{Request: r, Ctx: r.Ctx}, errors.New("chaos break: OnError before the user's OnRequest"))
				}
			})
		}
	}
	for _, col := range cols {
		col.OnRequest(onRequest)
		col.OnError(onError)
	}

	c.OnHTML(testserver.ProductLinkSelector+", "+testserver.NextSelector, func(e *colly.HTMLElement) {
		link := e.Request.AbsoluteURL(e.Attr("href"))
		product := e.DOM.Is(testserver.ProductLinkSelector)
		switch {
		case product && p.Shape == shCloneOnly:
			_ = detail.Visit(link)
		case p.Shape == shCtxChain:
			e.Request.Ctx.Put("listing", e.Request.URL.Path)
			_ = e.Request.Visit(link)
		default:
			_ = c.Visit(link)
		}
	})
	var records, seen atomic.Int64
	var writeErr atomic.Value
	product := func(r *colly.Request, title string) {
		n := seen.Add(1)
		u := r.URL.String()
		if p.Shape == shPanic && sp.Run == 1 && n == int64(p.PanicAt) {
			ev.add("panic", u, "")
			panic("chaos: the user's product callback panicked on " + u)
		}
		rec := productRec{URL: u, Title: title}
		if p.Shape == shCtxChain {
			rec.Listing = r.Ctx.Get("listing")
		}
		if err := writeProduct(sink, r, rec); err != nil {
			writeErr.CompareAndSwap(nil, err)
			return
		}
		records.Add(1)
	}
	if p.Shape == shXML {
		detail.OnXML("//div[contains(@class,'product')]//h1[contains(@class,'title')]", func(e *colly.XMLElement) { product(e.Request, e.Text) })
	} else {
		detail.OnHTML(testserver.TitleSelector, func(e *colly.HTMLElement) { product(e.Request, e.Text) })
	}

	var judges []outcome.Judge
	if sp.Resume {
		if _, err := cp.Resume(c); err != nil {
			judges = append(judges, outcome.Failed(fmt.Errorf("resume: %w", err)))
		}
	}
	for _, u := range sp.URLs {
		_ = c.Visit(u)
	}
	c.Wait()
	detail.Wait()
	if err, ok := writeErr.Load().(error); ok {
		judges = append(judges, outcome.Failed(err))
	}
	o := outcome.Decide(records.Load(), append([]outcome.Judge{v, b, cp}, judges...)...)
	cp.SetOutcome(o)
	if err := cp.Close(); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "chaos-child: checkpoint close: %v\n", err)
	}
	if !breakIs("noreport") {
		_ = json.NewEncoder(stdout).Encode(struct {
			Outcome outcome.Outcome `json:"outcome"`
		}{o})
	}
	fmt.Fprintf(stderr, "chaos-child: run finished, exit %d (%s: %s)\n", o.State.ExitCode(), o.State, o.Reason)
	return o.State.ExitCode()
}
