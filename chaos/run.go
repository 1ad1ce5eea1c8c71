package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// env is what every case of a run shares.
type env struct {
	bin   string  // the productcrawl binary
	self  string  // this binary, run again as a program case's program
	keep  string  // -keep: where a failing case's files go
	scale float64 // -bound-scale
}

// Result is a case run and judged.
type Result struct {
	Case       Case
	Violations []Violation
	Elapsed    time.Duration
	Note       string // what -v prints after the case: endings, P used
	Dir        string // kept files, if any
	// Stall is the longest this process was kept from running while the
	// case ran (a 5 ms ticker's worst lateness): on a loaded machine a
	// crawler's short client timeout can be reached by a stall alone.
	Stall time.Duration
}

// caseRun is everything the invariants read: the stores' logs, the
// output, each run's ending, the checkpoint.
type caseRun struct {
	c          Case
	sites      []*site
	hits       [][]testserver.Hit // per site, over every run
	out        []string           // product URLs written, over every run
	runs       []runOut
	final      runOut
	bound      time.Duration
	dir        string
	cp         map[string]storage.State // final checkpoint states of promised URLs
	cpErr      map[string]string
	hasCP      bool
	corrupted  bool     // fCorrupt damaged the file
	hashBefore [32]byte // after the damage, before the resume
	hashAfter  [32]byte
	pBy        []string // how P was chosen, per site
	// Redis cases with fRedisRestart: when Redis was killed and when it
	// answered again.
	redisKilled, redisBack time.Time
	// second is set when the late worker (Fault.Late) ran the crawl a
	// second time: every other worker had ended before it started, none
	// having found Redis lost, so nothing could tell it the crawl had run.
	// Its run, products and requests (from secondFrom on) are left out:
	// the case judges the first crawl.
	second     bool
	secondFrom time.Time
	// redir is the case's redirecting host (Wiring.Redirect), or nil.
	redir *redirector
	// proxies are the case's proxy pool (Wiring.Proxies), or nil.
	proxies *testserver.ProxyFleet
	// savedHalt is, for fDiskFull, each domain's Retry-After pause as the
	// checkpoint held it once the full disk had stopped the first run:
	// what the resume could know of the pauses the site asked for.
	savedHalt map[string]time.Time
}

func runCase(c Case, e env) Result {
	start := time.Now()
	res := Result{Case: c}
	cr := &caseRun{c: c, bound: time.Duration(float64(c.Bound()) * max(e.scale, 0.01))}
	for _, s := range c.Sites {
		ss, err := startSite(s)
		if err != nil {
			res.Violations = append(res.Violations, Violation{0, "setup: " + err.Error()})
			cr.closeSites()
			return res
		}
		cr.sites = append(cr.sites, ss)
	}
	defer cr.closeSites()
	if c.Wiring.Redirect && !c.Wiring.Process {
		rd, err := startRedirector(cr.sites)
		if err != nil {
			res.Violations = append(res.Violations, Violation{0, "setup: " + err.Error()})
			return res
		}
		cr.redir = rd
		defer rd.close()
	}
	if len(c.Wiring.Proxies) > 0 {
		var cfgs []testserver.ProxyConfig
		for _, m := range c.Wiring.Proxies {
			cfgs = append(cfgs, testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: m, Delay: 20 * time.Millisecond}})
		}
		pf, err := testserver.StartProxies(cfgs)
		if err != nil {
			res.Violations = append(res.Violations, Violation{0, "setup: " + err.Error()})
			return res
		}
		cr.proxies = pf
		defer pf.Close()
	}
	dir, err := os.MkdirTemp("", "chaos-case-")
	if err != nil {
		res.Violations = append(res.Violations, Violation{0, "setup: " + err.Error()})
		return res
	}
	cr.dir = dir
	stall := watchStall()
	cr.execute(e)
	res.Stall = stall()
	for _, s := range cr.sites {
		hits := s.store.Requests()
		if cr.second {
			hits = slices.DeleteFunc(hits, func(h testserver.Hit) bool { return !h.Time.Before(cr.secondFrom) })
		}
		cr.hits = append(cr.hits, hits)
	}
	if c.Program != nil {
		res.Violations = cr.checkProgram()
	} else {
		res.Violations = cr.check()
	}
	res.Elapsed = time.Since(start)
	res.Note = cr.note()
	if len(res.Violations) > 0 && e.keep != "" {
		kept := filepath.Join(e.keep, fmt.Sprintf("case-%d", c.Seed))
		if err := os.MkdirAll(e.keep, 0o755); err == nil {
			cr.writeLogs()
			if os.Rename(dir, kept) == nil {
				res.Dir, dir = kept, ""
			}
		}
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
	return res
}

// watchStall measures, until the returned func is called, how late a 5 ms
// ticker runs at worst; the func returns that lateness.
func watchStall() func() time.Duration {
	const every = 5 * time.Millisecond
	done := make(chan struct{})
	worst := make(chan time.Duration, 1)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		last, w := time.Now(), time.Duration(0)
		for {
			select {
			case <-t.C:
				now := time.Now()
				w = max(w, now.Sub(last)-every)
				last = now
			case <-done:
				worst <- w
				return
			}
		}
	}()
	return func() time.Duration {
		close(done)
		return <-worst
	}
}

// proxyURLs is the case's proxy pool's list, nil without one.
func (cr *caseRun) proxyURLs() []string {
	if cr.proxies == nil {
		return nil
	}
	return cr.proxies.URLs()
}

func (cr *caseRun) closeSites() {
	for _, s := range cr.sites {
		s.close()
	}
}

// execute runs the crawl once or twice, as the fault says.
func (cr *caseRun) execute(e env) {
	c, w, f := cr.c, cr.c.Wiring, cr.c.Fault
	out := &output{}
	mem := newMemory()
	cr.hasCP = (w.Process && w.Workers == 0) || w.Checkpoint != cpNone
	sig := syscall.SIGKILL
	if f.Kind == fQuit {
		sig = syscall.SIGQUIT
	}
	fsize := int64(0)
	once := func(ctx context.Context, resume bool, killAt time.Duration) (ro runOut) {
		start := time.Now()
		defer func() { ro.start, ro.end = start, time.Now() }()
		if w.Process {
			return crawlProcess(e.bin, w, cr.sites, cr.dir, procRun{resume: resume, killAt: killAt, sig: sig, bound: cr.bound, fsize: fsize})
		}
		return crawlLib(ctx, w, cr.sites, cr.dir, out, resume, mem, cr.bound, cr.promisedURLs, cr.redir, cr.proxyURLs())
	}
	bg := context.Background()
	if c.Program != nil {
		cr.executeProgram(e)
		return
	}
	if w.Workers > 0 {
		cr.executeRedis(e)
		return
	}
	switch f.Kind {
	case fNone:
		cr.runs = append(cr.runs, once(bg, false, 0))
	case fCancel:
		ctx, cancel := context.WithCancel(bg)
		t := time.AfterFunc(f.At, cancel)
		cr.runs = append(cr.runs, once(ctx, false, 0))
		t.Stop()
		cancel()
	case fDeadline:
		ctx, cancel := context.WithTimeout(bg, f.At)
		cr.runs = append(cr.runs, once(ctx, false, 0))
		cancel()
	case fKill, fQuit:
		if w.Process {
			cr.runs = append(cr.runs, once(bg, false, f.At))
		} else {
			// In-process the nearest thing to a kill is a stop: the
			// context ends, the checkpoint is closed, a new crawler
			// resumes it.
			ctx, cancel := context.WithTimeout(bg, f.At)
			cr.runs = append(cr.runs, once(ctx, false, 0))
			cancel()
		}
		// A scheduler reschedules a run that did not end complete.
		if r := cr.runs[0]; r.exit != 0 || r.hung {
			cr.runs = append(cr.runs, once(bg, true, 0))
		}
	case fDiskFull:
		fsize = f.Limit
		cr.runs = append(cr.runs, once(bg, false, 0))
		fsize = 0
		cr.savedHalt = readSavedHalts(filepath.Join(cr.dir, "crawl.db"))
		// Space freed, the scheduler runs it again.
		if r := cr.runs[0]; r.exit != 0 || r.hung {
			cr.runs = append(cr.runs, once(bg, true, 0))
		}
	case fCorrupt:
		cr.runs = append(cr.runs, once(bg, false, 0))
		path := filepath.Join(cr.dir, "crawl.db")
		r := rand.New(rand.NewPCG(c.Seed, 7))
		ok, err := corrupt(path, f.Corruption, r)
		if err != nil || !ok {
			break
		}
		cr.corrupted = true
		cr.hashBefore = fileHash(path)
		cr.runs = append(cr.runs, once(bg, true, 0))
		cr.hashAfter = fileHash(path)
	}
	cr.final = cr.runs[len(cr.runs)-1]
	if w.Process {
		cr.out = readProducts(cr.dir)
		if !cr.corrupted {
			cr.readCheckpointFile()
		}
	} else {
		cr.out = out.urls
		cr.cp, cr.cpErr = cr.final.cpStates, cr.final.cpErrs
	}
}

// readCheckpointFile reads the final states of the promised URLs from
// productcrawl's checkpoint file.
func (cr *caseRun) readCheckpointFile() {
	st, err := bolt.Open(filepath.Join(cr.dir, "crawl.db"), bolt.Config{})
	if err != nil {
		return
	}
	defer st.Close()
	cr.cp, cr.cpErr = map[string]storage.State{}, map[string]string{}
	for _, u := range cr.promisedURLs() {
		if rec, ok, err := st.Get(collyx.RequestID(u, nil)); err == nil && ok {
			cr.cp[u], cr.cpErr[u] = rec.State, rec.LastError
		}
	}
}

// readSavedHalts reads each domain's Retry-After pause saved in
// productcrawl's checkpoint file (the checkpoint's circuits, kept as JSON
// under its "checkpoint/breakers" key); nil if it cannot be read.
func readSavedHalts(path string) map[string]time.Time {
	st, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		return nil
	}
	defer st.Close()
	raw, ok, err := st.Meta("checkpoint/breakers")
	if err != nil || !ok {
		return nil
	}
	var saved map[string]struct {
		HaltUntil time.Time `json:"halt_until"`
	}
	if json.Unmarshal(raw, &saved) != nil {
		return nil
	}
	halts := map[string]time.Time{}
	for domain, c := range saved {
		halts[domain] = c.HaltUntil
	}
	return halts
}

// writeLogs writes each store's request log into the case's directory,
// for -keep.
func (cr *caseRun) writeLogs() {
	f, err := os.Create(filepath.Join(cr.dir, "requests.log"))
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, cr.c)
	for i, s := range cr.sites {
		fmt.Fprintf(f, "# store %d %s %s (crawler sees %s)\n", i, s.Site, s.store.URL(), s.url)
		for _, h := range cr.hits[i] {
			fmt.Fprintf(f, "%4d %s %-22s %d %s +%v conn %d#%d\n", h.Seq, h.Time.Format("15:04:05.000"), h.Path, h.Status, h.Mode, h.Latency, h.Conn, h.ConnSeq)
		}
	}
	for i, r := range cr.runs {
		fmt.Fprintf(f, "# run %d (%s to %s): exit %d hung=%v outcome=%+v err=%v\n", i+1,
			r.start.Format("15:04:05.000"), r.end.Format("15:04:05.000"), r.exit, r.hung, r.outcome, r.openErr)
		if r.report != "" {
			fmt.Fprintf(f, "#   productcrawl's last log lines: %s\n", r.report)
		}
	}
}

// executeRedis runs w.Workers productcrawl workers on one crawl shared
// through a private Redis, which fRedisRestart kills At into the run and
// starts again: empty, or from its AOF with Persist.
func (cr *caseRun) executeRedis(e env) {
	c, w, f := cr.c, cr.c.Wiring, cr.c.Fault
	persist := ""
	if f.Persist {
		persist = cr.dir
	}
	rs, err := startRedis(persist)
	if err != nil {
		cr.runs = []runOut{{exit: -1, openErr: err}}
		cr.final = cr.runs[0]
		return
	}
	defer rs.kill()
	back := make(chan struct{})
	if f.Kind == fRedisRestart {
		var mu sync.Mutex
		t := time.AfterFunc(f.At, func() {
			mu.Lock()
			defer mu.Unlock()
			cr.redisKilled = time.Now()
			rs.kill()
			time.Sleep(200 * time.Millisecond)
			_ = rs.start()
			cr.redisBack = time.Now()
			close(back)
		})
		defer func() {
			if t.Stop() {
				close(back)
			}
			mu.Lock() // the restart, if it began, is over: its times are set
			mu.Unlock()
		}()
	}
	runs := make([]runOut, w.Workers)
	var wg sync.WaitGroup
	for i := range w.Workers {
		wg.Go(func() {
			if f.Late && i == w.Workers-1 {
				select {
				case <-back:
				case <-time.After(cr.bound):
				}
			}
			start := time.Now()
			horizon := 2 * time.Second
			if f.Kind == fRedisRestart {
				horizon = 17 * time.Second
			}
			runs[i] = crawlProcess(e.bin, w, cr.sites, cr.dir, procRun{bound: cr.bound, redis: rs.url(),
				worker: i + 1, id: fmt.Sprintf("chaos-%d", c.Seed), horizon: horizon})
			runs[i].start, runs[i].end = start, time.Now()
		})
	}
	wg.Wait()
	cr.runs = runs
	if f.Late && !cr.redisKilled.IsZero() {
		// Every other worker had ended before the late one started, and
		// none had found the loss (they had all but finished): nothing
		// could tell the late one that the crawl had run.
		late := runs[len(runs)-1]
		cr.second = true
		for _, r := range runs[:len(runs)-1] {
			cr.second = cr.second && !saidLost(r) && r.end.Before(late.start)
		}
		if cr.second {
			cr.secondFrom = runs[len(runs)-1].start
			cr.runs = runs[:len(runs)-1]
		}
	}
	// Each worker's ending speaks for the crawl when it says complete
	// ("nothing is left anywhere"): judge that one if any does.
	cr.final = cr.runs[0]
	for _, r := range cr.runs {
		if r.exit == 0 {
			cr.final = r
			break
		}
	}
	cr.out = readProducts(cr.dir)
	if cr.second {
		cr.out = readProductsExcept(cr.dir, fmt.Sprintf("products-%d.jsonl", w.Workers))
	}
}
