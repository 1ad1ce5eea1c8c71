package checkpoint

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
)

// DefaultSinkName is the output's name in the checkpoint when
// SinkConfig.Name is empty.
const DefaultSinkName = "records"

// ErrNoAttempt is returned by Sink.Write for a request with no attempt
// under way: its outcome is recorded already (a Write from OnScraped, or
// later), or the checkpoint does not follow it (a collector it is not
// registered on).
var ErrNoAttempt = errors.New("checkpoint: no attempt of the request is under way")

// ErrNoOutput is returned by Checkpoint.Sink when the store cannot keep
// an output with the URL states (storage.OutputStore).
var ErrNoOutput = errors.New("checkpoint: the store keeps no output")

// ErrOutputMismatch is returned by Checkpoint.Sink when the file holds
// something the checkpoint did not write there: it is left as it is.
var ErrOutputMismatch = errors.New("checkpoint: the output file does not match the checkpoint")

// SinkConfig configures Checkpoint.Sink; a zero field keeps the default.
type SinkConfig struct {
	// Name names the output in the checkpoint (DefaultSinkName): a URL's
	// record is written once under it, whichever worker writes it. Give
	// each output of one crawl (products, reviews) its own.
	Name string

	// Worker names this writer among a fleet's that share a checkpoint
	// (storage/redis): each worker its own, the same across its restarts,
	// with its own file; two live workers of one name write one log, and
	// their files fail the check when either restarts. Empty: one process
	// writes the output.
	Worker string
}

// SinkStats counts what a Sink did since it was made.
type SinkStats struct {
	Written    int64 // URLs whose records this run put in the file
	Earlier    int64 // URLs whose records earlier runs committed, in the file once the Sink was made
	Restored   int64 // of those, the ones the file lacked (a kill between commit and write), appended
	TornBytes  int64 // bytes of a last record cut short by a kill, cut off the file
	Duplicates int64 // URLs whose records were left out: the output had them already (another worker's, a revisit)

	// UncommittedBytes is what the file held after every record committed
	// (a store that lost its last commits), cut off: those pages are
	// fetched again.
	UncommittedBytes int64
}

// Sink writes a crawl's records, one JSON line each, to a file so that
// what the program writes for a URL is there exactly once across kills
// (SIGKILL mid-line included), resumes and a fleet's workers. It is safe
// for concurrent use.
//
// Why once: Write only stages a page's lines with its attempt. The
// checkpoint commits them with the page's done record, in one atomic and
// durable commit of the store (storage.OutputStore), to the output's log
// there, and appends them to the file only after that commit, in the
// log's order. So at every moment the log holds exactly the lines of the
// pages done, each page's once (a page not done has lines nowhere and
// writes again when fetched again; a page done is never fetched again),
// and the file is a prefix of the log but for a last entry a kill cut
// short. Making the file equal to the log, which Checkpoint.Sink does, is
// then all a resume needs. A URL has at most one entry in an output,
// whichever worker commits it first: another that fetched it too (its
// lease taken over) has its lines left out. docs/checkpoints.md, "Records
// written once", has the rest.
type Sink struct {
	cp           *Checkpoint
	w            io.Writer
	name, worker string
	where        string // the file as messages name it

	mu    sync.Mutex // the file's writes, err and stats
	err   error
	stats SinkStats
}

// sinkFile is what a Sink needs of a file to check it against the
// checkpoint: *os.File has it.
type sinkFile interface {
	io.ReaderAt
	io.Seeker
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
}

// sinkKey names a sink's log: its output and its worker.
type sinkKey struct{ name, worker string }

// staged is what the Writes of a live attempt put aside, by sink.
type staged struct {
	lines map[*Sink][]byte
}

// sinks is the checkpoint's sinks and the lines staged for them.
type sinks struct {
	n      atomic.Int32 // len(by)
	mu     sync.Mutex
	by     map[sinkKey]*Sink
	staged map[uint64]*staged // record ID → its attempt's lines, until its done record is committed
}

// Sink returns a Sink writing to w, a file the program opened; the store
// must keep outputs (storage/bolt, storage/redis: ErrNoOutput otherwise).
// It first makes w hold exactly what the checkpoint committed to the
// output: a file (*os.File, opened with os.O_RDWR; os.O_APPEND or not) is
// checked against it byte for byte, a last record cut short by a kill is
// cut off and the records it lacks are appended; a file that does not
// begin with the committed records is refused (ErrOutputMismatch) and
// left as it is, and bytes after all of them, which no commit accounts for
// (a store that lost its last commits), are cut off. A writer that cannot be
// read back (standard output, a pipe, a buffer) is given every record
// committed so far, then this run's: point it at a fresh file each run
// (`> products.jsonl`), never append to one (`>>`). Make the Sink after
// New and before the crawl; with c.Worker, each of a fleet's workers its
// own file.
func (cp *Checkpoint) Sink(w io.Writer, c SinkConfig) (*Sink, error) {
	if w == nil {
		return nil, fmt.Errorf("checkpoint: Sink: %w: a nil writer", storage.ErrInvalid)
	}
	out, ok := cp.store.(storage.OutputStore)
	if !ok {
		return nil, fmt.Errorf("checkpoint: Sink: %w (%T): use storage/bolt or storage/redis, which commit a page's records with its done state", ErrNoOutput, cp.store)
	}
	s := &Sink{cp: cp, w: w, name: cmp.Or(c.Name, DefaultSinkName), worker: c.Worker, where: "the output"}
	if len(s.name) > storage.MaxMetaKeyLen || len(s.worker) > storage.MaxMetaKeyLen {
		return nil, fmt.Errorf("checkpoint: Sink: %w: a name over %d bytes", storage.ErrInvalid, storage.MaxMetaKeyLen)
	}
	if f, ok := w.(interface{ Name() string }); ok && f.Name() != "" {
		s.where = f.Name()
	}
	k := sinkKey{s.name, s.worker}
	cp.sinks.mu.Lock()
	if cp.sinks.by[k] != nil {
		cp.sinks.mu.Unlock()
		return nil, fmt.Errorf("checkpoint: Sink: %w: output %q (worker %q) has a Sink already; give each its own SinkConfig.Name", storage.ErrInvalid, s.name, s.worker)
	}
	cp.sinks.by[k] = s // reserved: no Write reaches it before it is returned
	cp.sinks.n.Store(int32(len(cp.sinks.by)))
	cp.sinks.mu.Unlock()
	if err := s.reconcile(out); err != nil {
		cp.sinks.mu.Lock()
		delete(cp.sinks.by, k)
		cp.sinks.n.Store(int32(len(cp.sinks.by)))
		cp.sinks.mu.Unlock()
		return nil, err
	}
	return s, nil
}

// Write encodes record as one JSON line (as json.Encoder does) for the
// page r is the request of, to be written once its page is done. Call it
// from the page's OnHTML, OnXML or OnResponse callbacks, as many times as
// the page has records: later (OnScraped, once the outcome is recorded)
// it returns ErrNoAttempt. An attempt that does not end done writes
// nothing (the next one writes again), and a URL's records are written
// once in all. After a failed write to the file it returns that error,
// but keeps the record all the same: committed with its page, it is in
// the file once the next run makes its Sink.
func (s *Sink) Write(r *colly.Request, record any) error {
	if r == nil {
		return fmt.Errorf("checkpoint: Sink.Write: %w: a nil request", storage.ErrInvalid)
	}
	line, err := json.Marshal(record)
	if err != nil {
		return fmt.Errorf("checkpoint: Sink.Write: the record cannot be encoded as JSON: %w", err)
	}
	cp := s.cp
	e, ok := cp.live.get(r)
	if !ok {
		return fmt.Errorf("checkpoint: Sink.Write %s: %w: write a page's records from its OnHTML or OnResponse callbacks, on a collector the checkpoint is registered on", r.URL, ErrNoAttempt)
	}
	l := cp.idLock(e.id)
	l.Lock()
	defer l.Unlock()
	if e.closed {
		return fmt.Errorf("checkpoint: Sink.Write %s: %w: its outcome is recorded; write a page's records from its OnHTML or OnResponse callbacks, which run before", r.URL, ErrNoAttempt)
	}
	cp.sinks.mu.Lock()
	st := cp.sinks.staged[e.id]
	if st == nil {
		st = &staged{lines: map[*Sink][]byte{}}
		cp.sinks.staged[e.id] = st
	}
	st.lines[s] = append(append(st.lines[s], line...), '\n')
	cp.sinks.mu.Unlock()
	// Kept all the same: committed with its page, in the file next run.
	return s.Err()
}

// Err returns the first error writing to the file, if any. After the
// checkpoint's Close, nil means every record committed is in the file.
func (s *Sink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Stats returns what the Sink did so far.
func (s *Sink) Stats() SinkStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// unstage forgets the lines an attempt of id staged (its stripe held):
// a new attempt leaves, or this one ended other than done.
func (cp *Checkpoint) unstage(id uint64) {
	if cp.sinks.n.Load() == 0 {
		return
	}
	cp.sinks.mu.Lock()
	delete(cp.sinks.staged, id)
	cp.sinks.mu.Unlock()
}

// stagedOf is a done record's staged lines, as stagedFor took them.
type stagedOf struct {
	id uint64
	st *staged
}

// stagedFor returns the output entries staged for the done records among
// final, and what they were taken from.
func (cp *Checkpoint) stagedFor(final []storage.Record) ([]storage.OutputEntry, []stagedOf) {
	if cp.sinks.n.Load() == 0 {
		return nil, nil
	}
	var entries []storage.OutputEntry
	var from []stagedOf
	cp.sinks.mu.Lock()
	defer cp.sinks.mu.Unlock()
	for _, r := range final {
		st := cp.sinks.staged[r.ID]
		if st == nil || r.State != storage.Done {
			continue
		}
		from = append(from, stagedOf{r.ID, st})
		for s, data := range st.lines {
			entries = append(entries, storage.OutputEntry{Output: s.name, Part: s.worker, ID: r.ID, Data: data})
		}
	}
	return entries, from
}

// putFinal puts the final records, with the lines staged for the done
// ones in one commit, then appends to each sink's file the entries the
// store took, in the order of its log (commit.go puts one batch at a time).
func (cp *Checkpoint) putFinal(final []storage.Record) error {
	entries, from := cp.stagedFor(final)
	if len(entries) == 0 {
		return cp.store.Put(final...)
	}
	took, err := cp.store.(storage.OutputStore).PutOutput(entries, final...)
	if err != nil {
		return err
	}
	cp.sinks.mu.Lock()
	for _, f := range from {
		if cp.sinks.staged[f.id] == f.st { // not a new attempt's meanwhile
			delete(cp.sinks.staged, f.id)
		}
	}
	by := maps.Clone(cp.sinks.by)
	cp.sinks.mu.Unlock()

	// An entry the store left out is a duplicate: the output had its URL already.
	data, written, dups := map[*Sink][]byte{}, map[*Sink]int64{}, map[*Sink]int64{}
	for _, e := range entries {
		if s := by[sinkKey{e.Output, e.Part}]; s != nil {
			dups[s]++
		}
	}
	for _, e := range took {
		if s := by[sinkKey{e.Output, e.Part}]; s != nil {
			data[s] = append(data[s], e.Data...)
			written[s]++
			dups[s]--
		}
	}
	for s, n := range dups {
		s.append(data[s], written[s], n)
	}
	return nil
}

// append writes b, n URLs' records, to the file, and counts dups URLs left
// out; a failure sticks.
func (s *Sink) append(b []byte, n, dups int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Duplicates += dups
	if s.err != nil || len(b) == 0 {
		return
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = fmt.Errorf("checkpoint: writing %s: %w; its records are committed in the checkpoint: fix the cause and resume, the next run writes them", s.where, err)
		s.cp.opt.Logger.Error().Str("event", "checkpoint_sink_failed").Str("output", s.name).Err(err).
			Msg("checkpoint: the output cannot be written; its records are kept in the checkpoint for the next run")
		return
	}
	s.stats.Written += n
}

// syncSinks makes each sink's file durable (an *os.File's Sync), at Close:
// a crawl that is not resumed keeps its last records through a power cut.
func (cp *Checkpoint) syncSinks() {
	cp.sinks.mu.Lock()
	all := slices.Collect(maps.Values(cp.sinks.by))
	cp.sinks.mu.Unlock()
	for _, s := range all {
		f, ok := s.w.(interface{ Sync() error })
		if !ok {
			continue
		}
		s.mu.Lock()
		if err := f.Sync(); err != nil && s.err == nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, syscall.EINVAL) {
			s.err = fmt.Errorf("checkpoint: syncing %s: %w; its records are committed in the checkpoint: the next run writes what the file lost", s.where, err)
		}
		s.mu.Unlock()
	}
}

// reconcile makes the file hold exactly the sink's log in the store: it
// checks every byte of the file against the log before it changes
// anything, then cuts a torn last entry and appends what the file lacks.
// A writer that cannot be read back is given the whole log.
func (s *Sink) reconcile(out storage.OutputStore) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, isFile := s.w.(sinkFile)
	var size int64
	if isFile {
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			isFile = false // standard output to a terminal, a pipe: written as a stream
		} else {
			size = st.Size()
		}
	}
	var (
		rd      *bufio.Reader
		off     int64 // bytes of the file matched
		cut     = !isFile || size == 0
		buf     []byte
		earlier int64
	)
	if isFile && size > 0 {
		if _, err := f.ReadAt(make([]byte, 1), 0); err != nil {
			return fmt.Errorf("checkpoint: Sink: %s cannot be read back (%v): open it with os.O_RDWR, so that it can be checked against the checkpoint, or start it empty", s.where, err)
		}
		rd = bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 64<<10)
	}
	bw := bufio.NewWriterSize(s.w, 64<<10) // what the file lacks, appended once cut
	writeErr := func(err error) error {
		return fmt.Errorf("checkpoint: Sink: writing the records earlier runs committed to %s: %w", s.where, err)
	}
	err := out.ScanOutput(s.name, s.worker, func(e storage.OutputEntry) error {
		earlier++
		if !cut {
			n := min(int64(len(e.Data)), size-off)
			torn := n < int64(len(e.Data)) // the file ends inside this entry: a write a kill cut short
			if int64(cap(buf)) < n {
				buf = make([]byte, n)
			}
			buf = buf[:n]
			if _, err := io.ReadFull(rd, buf); err != nil {
				return fmt.Errorf("checkpoint: Sink: reading %s: %w", s.where, err)
			}
			switch {
			case !bytes.Equal(buf, e.Data[:n]) && torn:
				return s.mismatch(off, "ends in bytes that are not the beginning of the next record committed")
			case !bytes.Equal(buf, e.Data[:n]):
				return s.mismatch(off, "holds other bytes than the record the checkpoint committed there")
			case !torn:
				off += n
				return nil
			}
			if err := f.Truncate(off); err != nil {
				return fmt.Errorf("checkpoint: Sink: cutting the torn last record off %s: %w", s.where, err)
			}
			if _, err := f.Seek(0, io.SeekEnd); err != nil {
				return fmt.Errorf("checkpoint: Sink: %s: %w", s.where, err)
			}
			s.stats.TornBytes = size - off
			cut = true
		}
		s.stats.Restored++
		if _, err := bw.Write(e.Data); err != nil {
			return writeErr(err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return writeErr(err)
	}
	if !cut {
		if off < size {
			if earlier == 0 {
				return s.mismatch(off, fmt.Sprintf("holds %d bytes, and the checkpoint committed nothing there", size))
			}
			// The file is the log, then bytes no commit accounts for: a
			// store that lost its last commits (their pages are fetched
			// again), or a hand that wrote there.
			if err := f.Truncate(off); err != nil {
				return fmt.Errorf("checkpoint: Sink: cutting what the checkpoint did not commit off %s: %w", s.where, err)
			}
			s.stats.UncommittedBytes = size - off
			s.cp.opt.Logger.Warn().Str("event", "checkpoint_sink_uncommitted").Str("output", s.name).Int64("bytes", size-off).
				Msg("checkpoint: the output held records the checkpoint did not commit; they were cut off, and their pages are fetched again")
		}
		if _, err := f.Seek(0, io.SeekEnd); err != nil {
			return fmt.Errorf("checkpoint: Sink: %s: %w", s.where, err)
		}
	}
	s.stats.Earlier = earlier
	return nil
}

// mismatch is the error for a file that is not the sink's output, from off.
func (s *Sink) mismatch(off int64, what string) error {
	return fmt.Errorf("%w: %s, at byte %d, %s (output %q, worker %q): it is another file, or the checkpoint is another crawl's; it was left as it is: move it aside, or point the Sink at the crawl's own",
		ErrOutputMismatch, s.where, off, what, s.name, s.worker)
}
