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

// The run's process is this very program run again as a child of the
// supervisor's, marked by supervisorEnv (whose value is the supervisor's
// pid). Before it exits it tells the code it exits with on the pipe at
// childCodeFD, so the supervisor can tell that code from a crash (Go's
// runtime exits 2 on a panic, a fatal error and SIGQUIT).
const (
	supervisorEnv = "BREAKWATER_MAIN_SUPERVISOR"
	childCodeFD   = 3
)

// supervised reports whether this process is a run a supervisor started,
// and returns how to tell it the run's code. It removes supervisorEnv
// from the environment either way: the run's own children are not
// supervised.
func supervised() (tell func(code int), ok bool) {
	v, set := os.LookupEnv(supervisorEnv)
	if !set {
		return nil, false
	}
	os.Unsetenv(supervisorEnv)
	if v != strconv.Itoa(os.Getppid()) {
		return nil, false // set by hand, or the supervisor is gone
	}
	syscall.CloseOnExec(childCodeFD) // a child of the child must not hold the pipe open
	f := os.NewFile(childCodeFD, "supervisor-code")
	return func(code int) {
		fmt.Fprintf(f, "%d\n", code)
		f.Close()
	}, true
}

// superviseRun runs the program again as a child process, the run, and
// returns the code Main exits with (see Main).
func superviseRun(func(context.Context) int) int {
	// Watched before the run starts: no signal kills the supervisor and
	// leaves the run going.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, slices.Concat(interrupts, fatalSignals)...)
	child, err := startChild()
	if err != nil {
		fmt.Fprintf(os.Stderr, "breakwater: cannot run the program's run: %v; exiting 1 (an error)\n", err)
		return 1
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
						_ = child.cmd.Process.Kill()
						continue
					}
					interrupted = sig
				}
				_ = child.cmd.Process.Signal(sig) // a run that has ended is no error worth handling
			case <-done:
				return
			}
		}
	}()
	ws, code, told := child.wait()
	close(done)
	<-forwarded

	switch {
	case killedBy != 0:
		fmt.Fprintf(os.Stderr, "breakwater: a second %v: the run was killed at once\n", killedBy)
		return dieOf(killedBy)
	case told && ws.Exited() && code&0xff == ws.ExitStatus():
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

// dieOf ends the program by sig, as if it had not been watched.
func dieOf(sig syscall.Signal) int {
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second) // delivered to another thread, it may take a moment
	return 128 + int(sig)
}

// childProcess is the run's process, started by startChild.
type childProcess struct {
	cmd    *exec.Cmd
	codes  *os.File
	locked bool
}

// startChild starts this program again, with the same arguments and
// environment plus supervisorEnv, sharing standard input, output and
// error, in the terminal's process group with the program (a Ctrl-Z
// stops both, and the run reads the terminal if it wants to). On Linux
// the child is killed when its supervisor dies. Call startChild and wait
// on one goroutine: the parent-death signal is tied to the thread that
// started the child, which startChild locks until wait.
func startChild() (*childProcess, error) {
	exe, err := selfExe()
	if err != nil {
		return nil, fmt.Errorf("cannot find this program's executable to run it again: %w", err)
	}
	codes, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cannot make the pipe to a child process: %w", err)
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	cmd.Env = append(os.Environ(), supervisorEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{w} // childCodeFD
	cmd.SysProcAttr = childAttr()
	p := &childProcess{cmd: cmd, codes: codes, locked: childLockThread}
	if p.locked {
		runtime.LockOSThread()
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		p.release()
		return nil, fmt.Errorf("cannot start a child process: %w", err)
	}
	return p, nil
}

func (p *childProcess) release() {
	p.codes.Close()
	if p.locked {
		p.locked = false
		runtime.UnlockOSThread()
	}
}

// wait waits for the child to end and returns how it did: its wait
// status, and the code it told, if it told one (told).
func (p *childProcess) wait() (ws syscall.WaitStatus, code int, told bool) {
	_ = p.cmd.Wait()
	defer p.release()
	line, _ := bufio.NewReader(p.codes).ReadString('\n')
	code, err := strconv.Atoi(strings.TrimSpace(line))
	ws, _ = p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws, code, err == nil
}
