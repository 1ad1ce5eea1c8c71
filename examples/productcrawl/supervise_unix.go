//go:build unix

package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/breakwater-crawl/breakwater/examples/productcrawl/earlysig"
	"github.com/breakwater-crawl/breakwater/examples/productcrawl/internal/supervise"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// supervisedChild reports whether this process is the crawl's child,
// and returns how to tell the supervisor its exit code.
func supervisedChild() (tell func(code int), ok bool) { return supervise.Child(childEnv) }

// superviseCrawl runs the crawl in a child process and returns its exit
// code, or 1 with a "crashed" event if the child crashed (see supervise.go).
func superviseCrawl(args []string, stderr *os.File) int {
	log := func(event string) *zerolog.Event {
		l := crashLogger(args, stderr)
		return l.Error().Str("event", event).Stringer("state", outcome.Error).Int("exit_code", outcome.Error.ExitCode())
	}
	// Notified before the child starts: no signal kills the supervisor
	// and leaves the child running.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGTSTP, syscall.SIGCONT)
	defer signal.Stop(sigs)
	// A SIGQUIT that came before main (see earlysig) is forwarded too.
	signal.Stop(earlysig.Quit)
	select {
	case s := <-earlysig.Quit:
		sigs <- s
	default:
	}
	child, err := supervise.Start(childEnv, true, stderr)
	if err != nil {
		log("run_failed").Err(err).Msg("cannot start the crawl's child process")
		return outcome.Error.ExitCode()
	}

	var received [32]atomic.Bool // the signals forwarded, by number
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				sig := s.(syscall.Signal)
				if sig == syscall.SIGTSTP { // Ctrl-Z: stop the child, then this process
					child.Signal(syscall.SIGSTOP)
					_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
					continue
				}
				if int(sig) < len(received) {
					received[sig].Store(true)
				}
				child.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	end := child.Wait()
	close(done)

	ws := end.Status
	switch {
	case end.AsTold():
		return end.Code
	case ws.Signaled() && (ws.Signal() == syscall.SIGINT || ws.Signal() == syscall.SIGTERM) && received[ws.Signal()].Load():
		// Killed by the signal it was sent before it could handle it
		// (early in its start): end the same way, as one process would.
		signal.Reset(ws.Signal())
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	var how string
	switch {
	case ws.Signaled():
		how = fmt.Sprintf("killed by signal %s", unix.SignalName(ws.Signal()))
		if ws.Signal() == syscall.SIGKILL {
			how += " (out of memory, or killed by hand)"
		}
	case end.Told:
		how = fmt.Sprintf("said it would exit %d, then exited %d: it crashed while ending", end.Code, ws.ExitStatus())
	default:
		how = fmt.Sprintf("exited %d before its run ended: a panic, a fatal runtime error or SIGQUIT (the runtime's trace is above)", ws.ExitStatus())
	}
	if received[syscall.SIGQUIT].Load() {
		how += "; SIGQUIT was sent to it"
	}
	ev := log("crashed")
	if ws.Signaled() {
		ev = ev.Str("signal", unix.SignalName(ws.Signal()))
	} else {
		ev = ev.Int("crawl_exit_code", ws.ExitStatus())
	}
	ev.Msg("crashed: the crawl " + how + "; the run is an error: a human must look (what it wrote is kept)")
	return outcome.Error.ExitCode()
}
