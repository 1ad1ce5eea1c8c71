package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// progRun is what the invariants read of one run of a program case
// beside its runOut.
type progRun struct {
	gen      int    // the crawl's generation: 2 after sqCPDeleted deleted the checkpoint
	sig      string // the signal the sequence sent it ("SIGKILL", "SIGQUIT", "SIGTERM", "SIGKILL mid-write"), if any
	sentAt   time.Time
	started  bool // the program's run had begun when the signal was sent
	finished bool // the program said its run had finished (before any crash)
	reported bool // its outcome reached stdout
	// written is the URLs of the records in the generation's products
	// file once the run ended; torn, its lines that are no record;
	// noCtx, the records of a ctx-chain program without their listing's
	// Ctx value.
	written []string
	torn    []string
	noCtx   []string
	// events is the program's event log lines of this run.
	events  []string
	healed  bool // the sequence had healed the fleet before this run
	stderrT string
}

// selfBinary is this binary, which a program case starts again as its
// program (childMain).
func selfBinary() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("the program cases run this binary again: %w", err)
	}
	return p, nil
}

// executeProgram runs a program case's run sequence, each run a process.
func (cr *caseRun) executeProgram(e env) {
	p := *cr.c.Program
	cr.hasCP = true
	var urls []string
	for _, s := range cr.sites {
		urls = append(urls, s.url+"/")
	}
	gen, healed, n := 1, false, 0
	one := func(resume bool, sig syscall.Signal, at time.Duration) runOut {
		n++
		sp := childSpec{Program: p, Profile: cr.c.Wiring.Profile.Name, Timeout: cr.c.Wiring.Timeout,
			URLs: urls, Dir: cr.dir, Run: n, Resume: resume}
		start := time.Now()
		ro := runChild(e.self, sp, sig, at, cr.bound)
		ro.start, ro.end = start, time.Now()
		ro.prog.gen, ro.prog.healed = gen, healed
		cr.snapshot(&ro)
		cr.runs = append(cr.runs, ro)
		return ro
	}
	last := func() runOut { return cr.runs[len(cr.runs)-1] }
	defer func() {
		cr.final = last()
		if cr.final.prog != nil {
			cr.out = cr.final.prog.written
		}
	}()
	untilDone := func() {
		for range maxReruns {
			r := last()
			if r.exit == 0 || r.hung || r.openErr != nil {
				return
			}
			// A scheduler reruns a tripped crawl once its retry_at has
			// passed: at most the profile's MaxCooldown.
			time.Sleep(p.maxCooldown() + 50*time.Millisecond)
			one(true, 0, 0)
		}
	}
	switch p.Seq {
	case sqOnce:
		one(false, 0, 0)
	case sqTripHeal:
		one(false, 0, 0)
		for _, s := range cr.sites {
			_ = s.store.SetScenario(testserver.Scenario{Mode: testserver.Healthy, Latency: s.Latency})
		}
		healed = true
		time.Sleep(p.maxCooldown() + 50*time.Millisecond)
		one(true, 0, 0)
	case sqCPDeleted:
		one(false, 0, 0)
		untilDone()
		// The user starts over: the checkpoint deleted, the output moved
		// aside, the cache kept warm.
		_ = os.Remove(filepath.Join(cr.dir, "crawl.db"))
		_ = os.Rename(filepath.Join(cr.dir, "products.jsonl"), filepath.Join(cr.dir, "products-gen1.jsonl.old"))
		gen = 2
		one(false, 0, 0)
	case sqRerunDone:
		one(false, 0, 0)
		untilDone()
		one(true, 0, 0)
		return
	case sqKill:
		if p.MidWrite > 0 {
			one(false, 0, 0) // the program kills itself in its MidWrite-th product's write
		} else {
			one(false, syscall.SIGKILL, p.At)
		}
	case sqQuit:
		one(false, syscall.SIGQUIT, p.At)
	case sqTerm:
		one(false, syscall.SIGTERM, p.At)
	}
	untilDone()
}

// afterStart fires at after the program's "run started" line appears in
// stderr; never once stop is closed.
func afterStart(stderr *syncBuffer, at time.Duration, stop <-chan struct{}) <-chan time.Time {
	fire := make(chan time.Time, 1)
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for !strings.Contains(stderr.String(), "chaos-child: run started") {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
		select {
		case <-stop:
		case t := <-time.After(at):
			fire <- t
		}
	}()
	return fire
}

// runChild runs one run of a program as a process, sending sig at at
// (0: none), torn down past bound.
func runChild(bin string, sp childSpec, sig syscall.Signal, at, bound time.Duration) runOut {
	ro := runOut{exit: -1, carried: -1, prog: &progRun{}}
	spec := filepath.Join(sp.Dir, fmt.Sprintf("spec-%d.json", sp.Run))
	b, _ := json.Marshal(sp)
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		ro.openErr = fmt.Errorf("write the run's spec: %w", err)
		return ro
	}
	cmd := exec.Command(bin)
	var stdout bytes.Buffer
	var stderr syncBuffer // read while the process writes it (finished, at a signal)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Dir = sp.Dir
	cmd.Env = append(os.Environ(), childEnv+"="+spec)
	if err := cmd.Start(); err != nil {
		ro.openErr = fmt.Errorf("start the program: %w", err)
		return ro
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	var kill <-chan time.Time
	if at > 0 && sig != 0 {
		kill = time.After(at)
		if sp.Program.FromStart {
			stop := make(chan struct{})
			defer close(stop)
			kill = afterStart(&stderr, at, stop)
		}
	}
	defer func() {
		_ = os.WriteFile(filepath.Join(sp.Dir, fmt.Sprintf("stderr-run-%d.log", sp.Run)), stderr.Bytes(), 0o644)
	}()
	var err error
	select {
	case err = <-done:
	case <-kill:
		ro.prog.sig, ro.prog.sentAt = sigName(sig), time.Now()
		se := stderr.String()
		ro.prog.started = strings.Contains(se, "chaos-child: run started")
		ro.prog.finished = strings.Contains(se, "chaos-child: run finished")
		_ = cmd.Process.Signal(sig)
		select {
		case err = <-done:
		case <-timer.C:
			ro.hung = true
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			return ro
		}
	case <-timer.C:
		ro.hung = true
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
		}
		return ro
	}
	se := stderr.String()
	ro.prog.stderrT = lastLines(se, 3)
	if ro.prog.sig == "" {
		ro.prog.finished = strings.Contains(se, "chaos-child: run finished")
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		ro.exit = 0
	case errors.As(err, &ee):
		ro.exit = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			ro.exit = -9 // killed: the run is not judged by its ending
			if ro.prog.sig == "" {
				ro.prog.sig = "SIGKILL mid-write"
			}
		}
	default:
		ro.openErr = err
		return ro
	}
	// A crash: the runtime's panic, or a SIGQUIT the run had not finished
	// before.
	// A SIGQUIT that reached a run already telling its end (it printed
	// "run finished" after the signal was sent, and nothing shows the
	// signal taking effect: no runtime dump, no supervisor's word of a
	// crash) did not crash it.
	quitTook := strings.Contains(se, "SIGQUIT: quit") || strings.Contains(se, "the run crashed") ||
		!strings.Contains(se, "chaos-child: run finished")
	ro.crashed = strings.HasPrefix(se, "panic: ") || strings.Contains(se, "\npanic: ") ||
		(ro.prog.sig == "SIGQUIT" && !ro.prog.finished && quitTook)
	// A SIGQUIT sent before the program's run began, while its main was
	// still starting (before breakwater.Main watches for it), meets Go's
	// defaults: not judged, as a SIGTERM then is not.
	ro.quitEarly = ro.prog.sig == "SIGQUIT" && !ro.prog.started
	var rep struct {
		Outcome *outcome.Outcome `json:"outcome"`
	}
	if json.Unmarshal(stdout.Bytes(), &rep) == nil && rep.Outcome != nil {
		ro.outcome, ro.prog.reported = *rep.Outcome, true
	}
	ro.report = ro.prog.stderrT
	return ro
}

// syncBuffer is a bytes.Buffer that may be read while it is written.
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

func (s *syncBuffer) Bytes() []byte { return []byte(s.String()) }

// sigName is the signal's name as the invariants' messages give it.
func sigName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// snapshot reads, after a run, the generation's products file and the
// run's events.
func (cr *caseRun) snapshot(ro *runOut) {
	pr := ro.prog
	ctxChain := cr.c.Program.Shape == shCtxChain
	if f, err := os.Open(filepath.Join(cr.dir, "products.jsonl")); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rec productRec
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.URL == "" {
				pr.torn = append(pr.torn, fmt.Sprintf("%.60q", sc.Text()))
				continue
			}
			pr.written = append(pr.written, rec.URL)
			if ctxChain && rec.Listing == "" {
				pr.noCtx = append(pr.noCtx, rec.URL)
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile(filepath.Join(cr.dir, "events.log")); err == nil {
		prefix := fmt.Sprintf("run=%d ", len(cr.runs)+1)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, prefix) {
				pr.events = append(pr.events, strings.TrimPrefix(l, prefix))
			}
		}
	}
}
