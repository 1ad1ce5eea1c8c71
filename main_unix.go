//go:build unix

package breakwater

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var interrupts = []os.Signal{syscall.SIGINT, syscall.SIGTERM}

// fatalSignals are those Go's runtime exits 2 on; the supervisor forwards
// them to the run, whose death is then a crash.
var fatalSignals = []os.Signal{syscall.SIGQUIT, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGABRT,
	syscall.SIGBUS, syscall.SIGFPE, syscall.SIGSEGV, syscall.SIGSYS}

// supervisorEnv marks the run's process; its value is the supervisor's
// pid. The run tells the supervisor its code on file descriptor codeFD.
const (
	supervisorEnv = "BREAKWATER_MAIN_SUPERVISOR"
	codeFD        = 3
)

// supervised reports whether this process is a run a supervisor started,
// and returns how to tell it the run's code.
func supervised() (tell func(code int), ok bool) {
	v, set := os.LookupEnv(supervisorEnv)
	if !set {
		return nil, false
	}
	os.Unsetenv(supervisorEnv) // the run's own children are not runs
	if v != strconv.Itoa(os.Getppid()) {
		return nil, false // set by hand, or the supervisor is gone
	}
	syscall.CloseOnExec(codeFD) // the run's own children must not hold the pipe open
	f := os.NewFile(codeFD, "breakwater-main-code")
	return func(code int) {
		fmt.Fprintf(f, "%d\n", code)
		f.Close()
	}, true
}

// supervise runs the program again as a child process, the run, and
// returns the code Main exits with (see Main).
func supervise(func(context.Context) int) int {
	exe, err := selfExe()
	if err != nil {
		return cannotStart(err)
	}
	codes, w, err := os.Pipe()
	if err != nil {
		return cannotStart(err)
	}
	defer codes.Close()
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	cmd.Env = append(os.Environ(), supervisorEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{w} // codeFD
	cmd.SysProcAttr = childAttr()

	// Watched before the run starts: no signal kills the supervisor and
	// leaves the run going.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, slices.Concat(interrupts, fatalSignals)...)
	if lockThread {
		// The parent-death signal fires when the thread that started
		// the child ends, not the process: keep this one.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return cannotStart(err)
	}

	var interrupted, killedBy syscall.Signal // the first interruption; the second
	done, forwarded := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(forwarded)
		for {
			select {
			case s := <-sigs:
				sig, _ := s.(syscall.Signal)
				if sig == syscall.SIGINT || sig == syscall.SIGTERM {
					if interrupted != 0 {
						killedBy = sig
						_ = cmd.Process.Kill()
						continue
					}
					interrupted = sig
				}
				_ = cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	_ = cmd.Wait()
	close(done)
	<-forwarded

	line, _ := bufio.NewReader(codes).ReadString('\n')
	code, cerr := strconv.Atoi(strings.TrimSpace(line))
	told := cerr == nil
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case killedBy != 0:
		fmt.Fprintf(os.Stderr, "breakwater: a second %v: the run was killed at once\n", killedBy)
		return dieOf(killedBy)
	case ws.Exited() && told && code&0xff == ws.ExitStatus():
		return ws.ExitStatus() // the code run returned
	case ws.Exited() && !told && ws.ExitStatus() != 2:
		return ws.ExitStatus() // an os.Exit inside run
	case ws.Signaled() && ws.Signal() == interrupted:
		// Killed by the interruption before it could watch for it (early
		// in its start): end the same way, as one process would.
		return dieOf(interrupted)
	}
	var how string
	switch {
	case ws.Signaled():
		how = "was killed by signal " + ws.Signal().String()
	case told:
		how = fmt.Sprintf("returned %d, then exited %d", code, ws.ExitStatus())
	default:
		how = "exited 2 without returning it: a panic, a fatal runtime error or a fatal signal (the runtime's trace is above)"
	}
	fmt.Fprintf(os.Stderr, "breakwater: the run crashed: it %s; exiting 1 (an error), not Go's 2 (tripped)\n", how)
	return 1
}

func cannotStart(err error) int {
	fmt.Fprintf(os.Stderr, "breakwater: cannot start the run in a child process: %v; exiting 1 (an error)\n", err)
	return 1
}

// dieOf ends the program by sig, as if it had not been watched.
func dieOf(sig syscall.Signal) int {
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second) // delivered to another thread, it may take a moment
	return 128 + int(sig)
}
