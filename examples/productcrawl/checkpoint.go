package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/rs/zerolog"
)

// openCheckpoint opens -checkpoint for the run: the file store, and the
// checkpoint on it (closeCheckpoint closes both). An existing file without
// --resume is refused (a usage error: the crawl in it would be
// overwritten by a new one), as is a file that is not a checkpoint; a
// damaged, newer or locked one is an error naming the file and what to do.
func openCheckpoint(cfg Config, log zerolog.Logger, onStoreError func(error)) (*checkpoint.Checkpoint, storage.Store, error) {
	_, err := os.Stat(cfg.Checkpoint)
	exists := err == nil
	switch {
	case exists && !cfg.Resume:
		return nil, nil, usageErr("-checkpoint %s already holds a crawl: pass --resume to continue it, or remove the file (or choose another -checkpoint) to start a new crawl", cfg.Checkpoint)
	case !exists && cfg.Resume:
		log.Info().Str("event", "no_checkpoint").Str("checkpoint", cfg.Checkpoint).
			Msg("--resume: no checkpoint yet, starting a new crawl")
	}
	st, err := bolt.Open(cfg.Checkpoint, bolt.Config{Logger: log})
	if err != nil {
		return nil, nil, checkpointErr(err)
	}
	cp, err := checkpoint.New(st, checkpoint.Config{Logger: log, OnStoreError: onStoreError})
	if err != nil {
		_ = st.Close()
		return nil, nil, checkpointErr(err)
	}
	return cp, st, nil
}

// checkpointErr is the error of opening -checkpoint: a file that is not a
// checkpoint is a usage error.
func checkpointErr(err error) error {
	if errors.Is(err, storage.ErrNotCheckpoint) {
		return usageErr("-checkpoint: %v", err)
	}
	return fmt.Errorf("opening -checkpoint: %w", err)
}

// closeCheckpoint ends the checkpoint's run, then closes its file.
func (cr *crawl) closeCheckpoint() error {
	err := cr.cp.Close()
	if cerr := cr.cpStore.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("closing -checkpoint: %w", cerr)
	}
	return err
}

// listDeadLetters prints the dead URLs of -checkpoint with their last
// error: exit 0, or 64 when there is no such checkpoint.
func listDeadLetters(cfg Config, stdout, stderr io.Writer) int {
	if _, err := os.Stat(cfg.Checkpoint); errors.Is(err, fs.ErrNotExist) {
		return usage(stderr, fmt.Errorf("--dead-letters: no checkpoint at %s (choose it with -checkpoint)", cfg.Checkpoint))
	}
	st, err := bolt.Open(cfg.Checkpoint)
	var cp *checkpoint.Checkpoint
	if err == nil {
		if cp, err = checkpoint.New(st, checkpoint.Config{}); err != nil {
			_ = st.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "productcrawl: --dead-letters: %v\n", err)
		if errors.Is(err, storage.ErrNotCheckpoint) {
			return outcome.Usage
		}
		return outcome.Error.ExitCode()
	}
	dead, err := cp.DeadLetters()
	if cerr := errors.Join(cp.Close(), st.Close()); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "productcrawl: --dead-letters: %v\n", err)
		return outcome.Error.ExitCode()
	}
	fmt.Fprintf(stdout, "%d dead URLs in %s\n", len(dead), cfg.Checkpoint)
	if len(dead) == 0 {
		return 0
	}
	rows := make([]deadRow, len(dead))
	for i, d := range dead {
		rows[i] = deadRow{d.URL, d.Attempts, d.LastError}
	}
	printDead(stdout, rows)
	return 0
}

// deadRow is one dead URL as --dead-letters prints it, from the checkpoint
// or from Redis.
type deadRow struct {
	url       string
	attempts  int
	lastError string
}

// printDead prints the dead URLs as a table.
func printDead(stdout io.Writer, rows []deadRow) {
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "url\tattempts\tlast error")
	for _, d := range rows {
		fmt.Fprintf(w, "%s\t%d\t%s\n", d.url, d.attempts, d.lastError)
	}
	w.Flush()
}

// retryHint is the checkpoint's judge, its finding of URLs dead of
// failures saying how this program re-drives them.
type retryHint struct{ cp *checkpoint.Checkpoint }

func (h retryHint) Judge() outcome.Evidence {
	ev := h.cp.Judge()
	for i, f := range ev.Findings {
		if f.Kind == "dead" {
			ev.Findings[i].Reason = f.Reason + " (here: run again with --resume --retry-dead)"
		}
	}
	return ev
}

// retryDead gives the URLs of -checkpoint that died of failures their
// attempts back (--retry-dead), before the resume re-drives them.
func (cr *crawl) retryDead() error {
	n, err := cr.cp.RetryDead()
	if err != nil {
		return err
	}
	cr.log.Info().Str("event", "retry_dead").Str("checkpoint", cr.cfg.Checkpoint).Int("revived", n).
		Msg("--retry-dead: the URLs dead of failures are fetched again, their attempts reset")
	return nil
}

// pendingByDomain counts, per domain, the URLs -checkpoint holds
// unfinished (pending, in flight, parked, failed with attempts left):
// the report's unfinished column, which the breaker alone would leave at
// 0 for URLs queued but never sent. Call it once the checkpoint is
// closed; it reopens the file and only reads it.
func pendingByDomain(path string) (map[string]int, error) {
	s, err := bolt.Open(path)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	err = s.Scan(func(r storage.Record) error {
		if u, perr := url.Parse(r.URL); perr == nil {
			out[strings.ToLower(u.Host)]++
		}
		return nil
	}, storage.Pending, storage.InFlight, storage.Parked, storage.Failed)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return out, err
}
