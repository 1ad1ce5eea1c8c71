//go:build unix

package breakwater

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// The run's process is this very program run again as a child of the
// supervisor's: childOf, startChild and childProcess tell the supervisor
// how the child ended, with the code the child said it would exit with,
// or some other way (a crash: Go's runtime exits 2 on a panic, a fatal
// error and SIGQUIT). superviseRun builds Main's policy on them.

// childCodeFD is the child's end of the pipe on which it tells its code.
const childCodeFD = 3

// childOf reports whether this process is a child that startChild started
// with env (whose value is the supervisor's pid), and returns how to tell
// the supervisor the code it is about to exit with. It removes env from the
// environment either way: the child's own children are not supervised.
func childOf(env string) (tell func(code int), ok bool) {
	v, set := os.LookupEnv(env)
	if !set {
		return nil, false
	}
	os.Unsetenv(env)
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

// childProcess is a child startChild started.
type childProcess struct {
	cmd    *exec.Cmd
	codes  *os.File
	locked bool
}

// startChild starts this program again, with the same arguments and
// environment plus env (marking the child: see childOf), sharing standard
// input and output, stderr as its standard error. ownGroup puts the child
// in a process group of its own (a terminal's signals then reach the
// supervisor alone). On Linux the child is killed when its supervisor
// dies. Call startChild and Wait on one goroutine: the parent-death
// signal is tied to the thread that started the child, which startChild
// locks until Wait. Watch the signals to forward before startChild.
func startChild(env string, ownGroup bool, stderr *os.File) (*childProcess, error) {
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
	cmd.Env = append(os.Environ(), env+"="+strconv.Itoa(os.Getpid()))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, stderr
	cmd.ExtraFiles = []*os.File{w} // childCodeFD
	cmd.SysProcAttr = childAttr(ownGroup)
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

// Signal sends sig to the child; a child that has ended is not an error
// worth handling, so none is returned.
func (p *childProcess) Signal(sig os.Signal) { _ = p.cmd.Process.Signal(sig) }

// Kill kills the child at once (SIGKILL).
func (p *childProcess) Kill() { _ = p.cmd.Process.Kill() }

// childEnding is how a child ended.
type childEnding struct {
	Status syscall.WaitStatus
	Told   bool // the child told a code before it ended
	Code   int  // the code it told
}

// AsTold reports whether the child exited with the code it told.
func (e childEnding) AsTold() bool {
	return e.Told && e.Status.Exited() && e.Code&0xff == e.Status.ExitStatus()
}

// Wait waits for the child to end and says how it did.
func (p *childProcess) Wait() childEnding {
	_ = p.cmd.Wait()
	defer p.release()
	line, _ := bufio.NewReader(p.codes).ReadString('\n')
	code, err := strconv.Atoi(strings.TrimSpace(line))
	ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return childEnding{Status: ws, Told: err == nil, Code: code}
}
