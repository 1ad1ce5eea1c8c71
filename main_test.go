//go:build unix

package breakwater_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bound is how long any run of testdata/mainprog may take before the test
// kills it and fails.
const bound = 20 * time.Second

// mainprog is testdata/mainprog, a main that hands its run to
// breakwater.Main, built once for every test here.
var mainprog struct {
	once sync.Once
	dir  string
	exe  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if mainprog.dir != "" {
		os.RemoveAll(mainprog.dir)
	}
	os.Exit(code)
}

func buildMainprog(t *testing.T) string {
	t.Helper()
	mainprog.once.Do(func() {
		if mainprog.dir, mainprog.err = os.MkdirTemp("", "breakwater-mainprog-"); mainprog.err != nil {
			return
		}
		mainprog.exe = filepath.Join(mainprog.dir, "mainprog")
		out, err := exec.Command("go", "build", "-o", mainprog.exe, "./testdata/mainprog").CombinedOutput()
		if err != nil {
			mainprog.err = fmt.Errorf("go build ./testdata/mainprog: %w\n%s", err, out)
		}
	})
	if mainprog.err != nil {
		t.Fatal(mainprog.err)
	}
	return mainprog.exe
}

// syncBuffer is a process's stdout or stderr, readable while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// prog is one run of mainprog, in a process group of its own.
type prog struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan struct{}
	err            error
}

func startMainprog(t *testing.T, exe string, args ...string) *prog {
	t.Helper()
	p := &prog{cmd: exec.Command(exe, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	return p
}

// wait waits for the program to end, within bound, and returns how it
// ended.
func (p *prog) wait(t *testing.T) syscall.WaitStatus {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(bound):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		t.Fatalf("still running after %v\nstdout:\n%s\nstderr:\n%s", bound, p.stdout.String(), p.stderr.String())
	}
	return p.cmd.ProcessState.Sys().(syscall.WaitStatus)
}

// ready waits for the run to say "ready PID" and returns the run's pid.
func (p *prog) ready(t *testing.T) int {
	t.Helper()
	for deadline := time.Now().Add(bound); ; time.Sleep(5 * time.Millisecond) {
		if _, rest, ok := strings.Cut(p.stdout.String(), "ready "); ok {
			if line, _, ok := strings.Cut(rest, "\n"); ok {
				pid, err := strconv.Atoi(line)
				if err != nil {
					t.Fatalf("ready %q", line)
				}
				return pid
			}
		}
		select {
		case <-p.done:
			t.Fatalf("ended before it was ready\nstdout:\n%s\nstderr:\n%s", p.stdout.String(), p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after %v\nstderr:\n%s", bound, p.stderr.String())
		}
	}
}

// waitFor waits, within bound, for s on the program's stdout.
func (p *prog) waitFor(t *testing.T, s string) {
	t.Helper()
	for deadline := time.Now().Add(bound); !strings.Contains(p.stdout.String(), s); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on stdout after %v\nstdout:\n%s\nstderr:\n%s", s, bound, p.stdout.String(), p.stderr.String())
		}
	}
}

func (p *prog) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%v: %v", sig, err)
	}
}

func describe(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + ws.Signal().String()
	}
	return fmt.Sprintf("exit %d", ws.ExitStatus())
}

// Main passes the run's code on, whatever it is, and turns every crash
// into 1: Go's runtime exits 2 on a panic in any goroutine and on a fatal
// runtime error, and 2 is "tripped: reschedule", which a crash must never
// read as.
func TestMainExitsWithTheRunsCodeAndACrashWithOne(t *testing.T) {
	exe := buildMainprog(t)
	for _, tc := range []struct {
		name  string
		args  []string
		want  int
		trace string // on stderr: the runtime's own, kept
	}{
		{"complete", []string{"code", "0"}, 0, ""},
		{"tripped", []string{"code", "2"}, 2, ""},
		{"empty", []string{"code", "3"}, 3, ""},
		{"usage", []string{"code", "64"}, 64, ""},
		{"os.Exit(3) in the run", []string{"exit", "3"}, 3, ""},
		{"os.Exit(0) in the run", []string{"exit", "0"}, 0, ""},
		{"a panic in the run", []string{"panic"}, 1, "panic: mainprog: a panic in the run"},
		{"a panic in another goroutine", []string{"gopanic"}, 1, "panic: mainprog: a panic in another goroutine"},
		{"a fatal runtime error", []string{"fatal"}, 1, "fatal error: sync: unlock of unlocked mutex"},
		// Go's runtime exits 2 on a crash: a run that exits 2 itself
		// without returning it cannot be told from one.
		{"os.Exit(2) in the run", []string{"exit", "2"}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startMainprog(t, exe, tc.args...)
			ws := p.wait(t)
			if !ws.Exited() || ws.ExitStatus() != tc.want {
				t.Fatalf("%s, want exit %d\nstderr:\n%s", describe(ws), tc.want, p.stderr.String())
			}
			if !strings.Contains(p.stderr.String(), tc.trace) {
				t.Errorf("stderr has no %q: the runtime's trace must be kept\n%s", tc.trace, p.stderr.String())
			}
		})
	}
}

// SIGQUIT sent to the program (a scheduler's, or Ctrl-\) makes Go dump its
// goroutines and exit 2, and so do SIGABRT and SIGSEGV sent from outside:
// under Main each is a crash, exit 1, the dump kept.
func TestMainAFatalSignalIsACrash(t *testing.T) {
	exe := buildMainprog(t)
	for _, sig := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGSEGV} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			p := startMainprog(t, exe, "wait")
			p.ready(t)
			p.signal(t, sig)
			ws := p.wait(t)
			if !ws.Exited() || ws.ExitStatus() != 1 {
				t.Fatalf("%s, want exit 1 (a crash)\nstderr:\n%s", describe(ws), p.stderr.String())
			}
			if !strings.Contains(p.stderr.String(), "goroutine ") {
				t.Errorf("stderr has no goroutine dump:\n%s", p.stderr.String())
			}
		})
	}
}

// SIGTERM and SIGINT cancel the run's context with ErrInterrupted; the run
// ends the crawl, prints its report and returns its own code (2, tripped:
// reschedule), which Main passes on. A Ctrl-C on a terminal reaches the
// whole process group: it is still one interruption, not two.
func TestMainInterruptCancelsTheRunsContext(t *testing.T) {
	exe := buildMainprog(t)
	for _, tc := range []struct {
		name  string
		group bool
		sig   syscall.Signal
	}{
		{"SIGTERM", false, syscall.SIGTERM},
		{"SIGINT", false, syscall.SIGINT},
		{"SIGINT to the process group", true, syscall.SIGINT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startMainprog(t, exe, "wait")
			p.ready(t)
			pid := p.cmd.Process.Pid
			if tc.group {
				pid = -pid
			}
			if err := syscall.Kill(pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			ws := p.wait(t)
			if !ws.Exited() || ws.ExitStatus() != 2 {
				t.Fatalf("%s, want exit 2 (the run's own code)\nstdout:\n%s\nstderr:\n%s", describe(ws), p.stdout.String(), p.stderr.String())
			}
			if !strings.Contains(p.stdout.String(), "report: interrupted=true canceled=true") {
				t.Errorf("no report, or the context's cause is not both ErrInterrupted and context.Canceled:\n%s", p.stdout.String())
			}
		})
	}
}

// A run that does not end when its context is cancelled is ended at once by
// a second signal: the program dies of that signal, as one without Main
// would, and takes its run with it.
func TestMainSecondSignalEndsARunThatHangs(t *testing.T) {
	p := startMainprog(t, buildMainprog(t), "hang")
	run := p.ready(t)
	p.signal(t, syscall.SIGINT)
	p.waitFor(t, "cancelled")
	p.signal(t, syscall.SIGINT)
	ws := p.wait(t)
	if !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Fatalf("%s, want killed by SIGINT\nstderr:\n%s", describe(ws), p.stderr.String())
	}
	waitGone(t, run)
}

// On Linux the run dies with the process a scheduler started: a SIGKILL to
// it stops the crawl.
func TestMainRunDiesWithItsSupervisor(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a parent-death signal is Linux's")
	}
	p := startMainprog(t, buildMainprog(t), "hang")
	run := p.ready(t)
	if run == p.cmd.Process.Pid {
		t.Fatalf("the run is in the process the test started (pid %d): nothing supervises it", run)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(t)
	waitGone(t, run)
}

// waitGone waits, within bound, for the process pid to have ended (a
// zombie nobody reaps has ended).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(bound); ; time.Sleep(5 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil && syscall.Kill(pid, 0) == syscall.ESRCH {
			return
		}
		if _, state, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(state, "Z") {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the run (pid %d) still runs %v after its program ended", pid, bound)
		}
	}
}
