// Command productcrawl is the main job: a product crawl with Breakwater's
// per-domain circuit breaker and page validation on, that keeps every valid
// product it collected and says honestly how it ended.
//
//	go run ./examples/productcrawl                    # crawls an embedded test store fleet
//	go run ./examples/productcrawl -h                 # the flags
//	go run ./examples/productcrawl --report json https://shop.example/
//	go run ./examples/productcrawl -report html       # and report.html: a timeline per domain
//
// It appends every valid product page to -out as one JSON object a line
// ({"url","title","price","fetched_at"} by default; -field chooses), or as
// a CSV row under a header row when -out ends in .csv, never an invalid
// page, shows progress while it runs, prints a per-domain report
// on stdout (package report) and exits with the code of the outcome the
// library decided (package outcome):
//
//	0   complete  work done, records written
//	2   tripped   a target degraded, or the run was interrupted: reschedule
//	3   empty     ran to the end, nothing valid collected, nothing tripped
//	1   error     our bug or a broken environment (selector_broken included,
//	              and a run none of whose start URLs could be reached),
//	              URLs dead of failures (a person decides: --retry-dead),
//	              or a crash: a panic, a fatal runtime error, SIGQUIT
//	64  usage     bad flags or configuration: nothing was sent
//
// Go's runtime exits 2 on a crash, the code of a run to reschedule, so the
// crawl runs in a child process of productcrawl's own, which turns a child
// that crashed into exit 1 with a "crashed" event after the runtime's trace
// (supervise.go; on Unix).
//
// Hosts are named the way Colly sends to them, which is how the report,
// the logs and -parallelism's per-host pools name them: a start URL's host
// in its ASCII form (http://bücher.example/ is xn--bcher-kva.example), an
// IPv4 address in dotted decimal (0x7f.0.0.1 is 127.0.0.1), the scheme's
// default port dropped (http://h:80/ is h). A -profiles file may name a
// host either way.
//
// -checkpoint (crawl.db) keeps the state of every URL; --resume continues
// a crawl that ended tripped, was interrupted or killed: it fetches only
// what was not done, and -out never gets the same URL twice (see
// records.go's reconcile for how, even across a SIGKILL). A URL that
// failed (5xx, timeout, invalid page) is tried again by each resume until
// its 3 attempts are spent; then it is dead of failures and every run ends
// as an error naming such URLs by domain and cause, until --resume
// --retry-dead fetches them again with their attempts reset (a 404 or 410
// is dead at once, and fine). --dead-letters lists the URLs given up on.
//
// Scale-out: -redis redis://host:6379/0 keeps the crawl in Redis instead of
// the file, and every productcrawl started with the same -redis and
// -crawl-id (by default derived from the start URLs) works that one crawl,
// on one machine or many:
//
//	productcrawl --redis redis://10.0.0.5:6379/0 --out products-$(hostname).jsonl https://shop.example/
//
// Each URL is fetched by one worker (the visited set is claimed atomically
// in Redis) and each worker appends its products to its own -out: the
// union of the files holds every product once (twice only for a page whose
// worker was killed between writing it and settling its job: delivery is
// at least once). The circuit breakers are shared, so a domain that trips
// for one worker is refused by all. A worker runs until nothing is left
// anywhere in the crawl, or only work due later than -wait-horizon (30 s
// by default: a tripped domain's URLs wait out its cooldown, 60 s for the
// standard profile); that work stays queued, the run ends tripped (exit
// 2), and the same command run again continues the crawl. -checkpoint,
// --resume and -max-pages do not apply; --dead-letters with -redis lists
// the crawl's dead letters. Each worker's report and exit code are its own share of
// the crawl. Redis unreachable at start is an error (exit 1) within
// -timeout; unreachable during the crawl, the worker pauses and goes on
// when it answers again (see redis.go).
//
// SIGINT or SIGTERM to a worker stops it alone: the requests it had not
// sent go back to the crawl at once, for the other workers.
//
// SIGINT or SIGTERM stops issuing requests; those in flight finish, their
// products are written, the report is printed. A run stopped before its
// work was done ends as tripped (exit 2): the partial is kept and a
// rescheduled run does the rest; an error another judge found still wins.
// A second signal aborts the requests in flight.
//
// orchestrate.sh beside this file shows a scheduler acting on each code.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
	"github.com/rs/zerolog"
)

func main() {
	slowStart()
	zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000Z07:00" // milliseconds: a crawl's events are close together
	if tell, ok := supervisedChild(); ok {
		os.Exit(runChild(tell, os.Args[1:]))
	}
	// The crawl runs in a child process, so a crash is an error (exit 1),
	// not Go's exit 2 that reads as tripped: see supervise.go.
	os.Exit(superviseCrawl(os.Args[1:], os.Stderr))
}

// run is the whole program; it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, stdout)
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, errVersion) {
		return 0
	}
	if err != nil {
		return usage(stderr, err)
	}
	if cfg.RedisPurge {
		return purgeRedisCrawl(cfg, stdout, stderr)
	}
	if cfg.DeadLetters {
		if cfg.Redis != "" {
			return listRedisDeadLetters(cfg, stdout, stderr)
		}
		return listDeadLetters(cfg, stdout, stderr)
	}

	st := newStatus(cfg.Status, stdout, cfg.Progress)
	log := newLogger(cfg, stderr, st)

	if len(cfg.URLs) == 0 {
		// The demo fleet lives as long as this process: its checkpoint
		// cannot be resumed, so it is temporary unless -checkpoint says.
		// (With -redis its crawl id is derived from the fleet's URLs,
		// which are new each time: each demo run is a crawl of its own.)
		if !cfg.checkpointSet && cfg.Redis == "" {
			if cfg.Resume {
				return usage(stderr, errors.New("--resume: the embedded demo fleet is gone when a run ends, there is nothing to resume; give start URLs (and -checkpoint) to resume a crawl"))
			}
			dir, err := os.MkdirTemp("", "productcrawl-demo-")
			if err != nil {
				log.Error().Str("event", "demo_failed").Err(err).Msg("cannot make the demo's temporary checkpoint")
				return outcome.Decide(0, outcome.Failed(err)).State.ExitCode()
			}
			defer os.RemoveAll(dir)
			cfg.Checkpoint = filepath.Join(dir, "crawl.db")
		}
		fleet, err := startDemo(log)
		if err != nil {
			log.Error().Str("event", "demo_failed").Err(err).Msg("cannot start the embedded test stores")
			return outcome.Decide(0, outcome.Failed(err)).State.ExitCode()
		}
		defer fleet.Close()
		for _, s := range fleet.Stores {
			cfg.URLs = append(cfg.URLs, s.URL()+"/")
		}
		if err := cfg.validate(); err != nil {
			return usage(stderr, err)
		}
	}

	cr, err := newCrawl(cfg, log)
	var ue *usageError
	if errors.As(err, &ue) {
		return usage(stderr, err)
	}
	if err != nil {
		// The environment, not the configuration: -out cannot be opened.
		o := outcome.Decide(0, outcome.Failed(err))
		log.Error().Str("event", "run_finished").Stringer("state", o.State).Int("exit_code", o.State.ExitCode()).Err(err).Msg("cannot start the crawl")
		return o.State.ExitCode()
	}

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case sig := <-sigs:
				cr.interrupt(sig)
			case <-done:
				return
			}
		}
	}()

	st.start(log, cr.b, cr.out)
	crashAtStart()
	o, rep := cr.run()
	st.stop()
	cr.release()
	if err := writeReport(rep, cfg, stdout, log); err != nil {
		log.Error().Str("event", "report_failed").Err(err).Msg("cannot write the report")
		return outcome.Decide(o.Records, outcome.Failed(err)).State.ExitCode()
	}
	return o.State.ExitCode()
}

// writeReport writes the report: to -report-file if given, else on
// stdout; the HTML page goes to its file with the text table on stdout.
func writeReport(rep report.Report, cfg Config, stdout io.Writer, log zerolog.Logger) error {
	if cfg.ReportFile == "" {
		return rep.Write(stdout, cfg.format)
	}
	if cfg.format == report.HTML {
		if err := rep.Write(stdout, report.Text); err != nil {
			return err
		}
	}
	f, err := os.Create(cfg.ReportFile)
	if err != nil {
		return fmt.Errorf("-report-file: %w (name a file in a directory that exists and may be written)", err)
	}
	if err := rep.Write(f, cfg.format); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("-report-file %s: %w", cfg.ReportFile, err)
	}
	path, _ := filepath.Abs(cfg.ReportFile)
	log.Info().Str("event", "report_written").Str("file", path).Msg("report written to " + path)
	return nil
}

// usage reports a configuration error: exit 64, nothing was sent.
func usage(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "productcrawl: %v\nRun productcrawl -h for the flags.\n", err)
	return outcome.Usage
}

// newLogger writes to stderr (see logWriter).
func newLogger(cfg Config, stderr io.Writer, st *status) zerolog.Logger {
	return zerolog.New(st.wrap(logWriter(cfg, stderr))).Level(cfg.level).With().Timestamp().Logger()
}

// logWriter is stderr for the logger: console lines on a terminal (or
// with -log-format console), JSON lines otherwise.
func logWriter(cfg Config, stderr io.Writer) io.Writer {
	f, isFile := stderr.(*os.File)
	tty := isFile && isTerminal(f)
	if cfg.LogFormat == "console" || (cfg.LogFormat == "auto" && tty) {
		w := zerolog.ConsoleWriter{Out: stderr, TimeFormat: "15:04:05.000", NoColor: !tty}
		if cfg.level > zerolog.DebugLevel {
			// A trip's window is 20 outcomes or more: on a terminal it
			// pushes the status line away. Console lines show it at
			// debug level only (window_n says how many); JSON keeps it.
			w.FieldsExclude = []string{"window"}
		}
		return w
	}
	return stderr
}
