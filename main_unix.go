//go:build unix

package breakwater

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"
)

var interrupts = []os.Signal{syscall.SIGINT, syscall.SIGTERM}

// fatalSignals are those Go's runtime exits 2 on; the supervisor forwards
// them to the run, whose death is then a crash.
var fatalSignals = []os.Signal{syscall.SIGQUIT, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGABRT,
	syscall.SIGBUS, syscall.SIGFPE, syscall.SIGSEGV, syscall.SIGSYS}

// supervisorEnv marks the run's process.
const supervisorEnv = "BREAKWATER_MAIN_SUPERVISOR"

// supervised reports whether this process is a run a supervisor started,
// and returns how to tell it the run's code.
func supervised() (tell func(code int), ok bool) { return childOf(supervisorEnv) }

// superviseRun runs the program again as a child process, the run, and
// returns the code Main exits with (see Main).
func superviseRun(func(context.Context) int) int {
	// Watched before the run starts: no signal kills the supervisor and
	// leaves the run going.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, slices.Concat(interrupts, fatalSignals)...)
	// In the terminal's process group, with the program: a Ctrl-Z stops
	// both, and the run reads the terminal if it wants to.
	child, err := startChild(supervisorEnv, false, os.Stderr)
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
						child.Kill()
						continue
					}
					interrupted = sig
				}
				child.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	end := child.Wait()
	close(done)
	<-forwarded

	ws := end.Status
	switch {
	case killedBy != 0:
		fmt.Fprintf(os.Stderr, "breakwater: a second %v: the run was killed at once\n", killedBy)
		return dieOf(killedBy)
	case end.AsTold():
		return ws.ExitStatus() // the code run returned
	case ws.Exited() && !end.Told && ws.ExitStatus() != 2:
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
	case end.Told:
		how = fmt.Sprintf("returned %d, then exited %d", end.Code, ws.ExitStatus())
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
