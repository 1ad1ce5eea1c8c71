package main

import (
	"io"
	"os"

	"github.com/breakwater-crawl/breakwater/examples/productcrawl/earlysig"
	"github.com/rs/zerolog"
)

// A crash must never read as a trip. Go's runtime exits 2 on an
// unrecovered panic (in any goroutine), on a fatal runtime error
// (concurrent map writes, out of memory, a broken lock: no recover can
// catch those) and on SIGQUIT, and 2 is "tripped: reschedule, no human
// needed": a crash loop would be rescheduled silently forever. No
// in-process handler covers all of that, so productcrawl supervises
// itself: the process a user or a scheduler starts runs the crawl in a
// child process, the same binary, and passes the child's exit code on
// only when the child said, just before exiting, that this is how its run
// ended. A child that ended any other way crashed: the supervisor logs a
// "crashed" event and exits 1 (error: a human must look). The runtime's
// own trace, on the shared stderr, stays above it.
//
// Signals reach the crawl as before: SIGINT and SIGTERM sent to the
// supervisor are forwarded to the child (which is in a process group of
// its own, so a Ctrl-C on a terminal reaches it once, not twice), SIGQUIT
// too (the child dumps its goroutines: a crash), and Ctrl-Z stops both.
// On Linux the child is killed when the supervisor is (a SIGKILL to the
// process the scheduler knows still stops the crawl at once).

// childEnv marks the child process (see internal/supervise).
const childEnv = earlysig.ChildEnv

// runChild runs the crawl in the supervised child, tells the supervisor
// the exit code it is about to exit with, and returns it.
func runChild(tell func(code int), args []string) int {
	code := run(args, os.Stdout, os.Stderr)
	tell(code)
	return code
}

// crashLogger is the supervisor's logger, for its one line: the format
// the run's flags ask for (see newLogger), JSON when they cannot be read.
func crashLogger(args []string, stderr io.Writer) zerolog.Logger {
	cfg, err := parseConfig(args, io.Discard)
	if err != nil {
		cfg = defaults()
	}
	return zerolog.New(logWriter(cfg, stderr)).With().Timestamp().Logger()
}
