package breakwater

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
)

// ErrInterrupted is the cause (context.Cause) of the context Main gives the
// run once SIGINT or SIGTERM cancelled it; the cause is context.Canceled
// too:
//
//	if errors.Is(context.Cause(ctx), breakwater.ErrInterrupted) { ... }
var ErrInterrupted = errors.New("breakwater: interrupted")

// Main runs run, the whole of a crawl's program, and exits with the code it
// returns; it does not return. Call it first in main, with nothing before
// it that acts: on Unix the program runs twice, once as a supervisor and
// once, in a child process, as the run (until Main is called, Go's own
// handling of signals holds).
//
//	func main() { breakwater.Main(run) }
//
// Go's runtime exits 2 on a panic in any goroutine (Colly's too), on a
// fatal runtime error and on SIGQUIT, and 2 is "tripped: reschedule" (see
// package outcome): a crash loop would be rescheduled without a human.
// Under Main the program exits with the code run returned, or with the
// code of an os.Exit inside run, and with 1 (error) when run crashed: it
// exited 2 without returning 2, or was killed by a signal. So run must
// return 2, not call os.Exit(2). SIGQUIT, SIGABRT, SIGSEGV and the other
// fatal signals sent to the program are a crash too.
//
// SIGINT and SIGTERM cancel ctx with ErrInterrupted: the run ends its
// crawl (colly.StdlibContext(ctx) stops its requests), prints its report
// and returns its code (an interrupted crawl is tripped). A second one
// kills the run at once, and the program dies of that signal. A Ctrl-C on
// a terminal, which reaches the child too, counts once.
//
// The run's process has the program's arguments, environment, standard
// input, output and error, and no other open file of the supervisor's
// (its file descriptor 3 is Main's). On Linux it is killed when its
// supervisor is (a SIGKILL to the program stops the crawl); on other Unix
// systems it runs on. Outside Unix there is no supervisor: run runs in
// this process, a panic in its own goroutine exits 1 and one in another
// goroutine exits 2. A nil run exits 1.
func Main(run func(ctx context.Context) int) {
	if run == nil {
		fmt.Fprintln(os.Stderr, "breakwater: Main was given a nil run function; exiting 1 (an error)")
		os.Exit(1)
	}
	if tell, ok := supervised(); ok {
		code := runInterruptible(run)
		tell(code)
		os.Exit(code)
	}
	os.Exit(superviseRun(run))
}

// runInterruptible runs run with a context that SIGINT and SIGTERM cancel.
// Later signals are swallowed: the first one has said it all.
func runInterruptible(run func(ctx context.Context) int) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, interrupts...)
	go func() {
		for s := range sigs {
			// context.Canceled too: code that tells a cancellation by it
			// (net/http returns the cause in its place) still does.
			cancel(fmt.Errorf("%w (%v): %w", ErrInterrupted, s, context.Canceled))
		}
	}()
	return run(ctx)
}
