package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// sink appends records to the -out file as JSON lines, or as CSV rows
// under a header row when the name ends in .csv. Each line is one write to
// a file opened for appending, so a run stopped at any moment leaves only
// whole lines, and every record written is on disk before the next page
// is scored. A URL is written at most once per run, and with --resume (or
// -redis) at most once in the file: see reconcile.
type sink struct {
	mu      sync.Mutex
	f       *os.File
	path    string
	csv     []string // the CSV header: url, the fields, fetched_at; nil for JSON lines
	seen    map[string]bool
	perHost map[string]int64
	total   int64
	earlier int64 // lines earlier runs wrote (--resume), counted in total
	torn    int   // bytes of a torn last line cut off on resume
	err     error // the first write error; the run ends as an error
}

// isCSV reports whether -out names a CSV file.
func isCSV(path string) bool { return strings.EqualFold(filepath.Ext(path), ".csv") }

// csvHeader is the header row of a CSV -out.
func csvHeader(fields []Field) []string {
	h := []string{"url"}
	for _, f := range fields {
		h = append(h, f.Name)
	}
	return append(h, "fetched_at")
}

// openSink opens path for appending records of the given fields. With
// resume it first reconciles the file with the crawl so far (see
// reconcile). A CSV file gets its header row when it is empty; one with
// another header is refused, nothing written.
func openSink(path string, resume bool, fields []Field) (*sink, error) {
	s := &sink{path: path, seen: map[string]bool{}, perHost: map[string]int64{}}
	if isCSV(path) {
		s.csv = csvHeader(fields)
		if err := s.checkHeader(); err != nil {
			return nil, err
		}
	}
	if resume {
		if err := s.reconcile(); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening -out: %w", err)
	}
	s.f = f
	if s.csv != nil {
		if st, err := f.Stat(); err == nil && st.Size() == 0 {
			if _, err := f.Write(csvLine(s.csv)); err != nil {
				f.Close()
				return nil, fmt.Errorf("writing the header of %s: %w", path, err)
			}
		}
	}
	return s, nil
}

// checkHeader refuses a CSV -out whose first line is whole and is not the
// header this run writes: rows of other columns would be mixed into it.
func (s *sink) checkHeader() error {
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading -out: %w", err)
	}
	first, _, whole := bytes.Cut(b, []byte("\n"))
	if !whole {
		if len(b) > 0 { // a header cut short by a crash: write it again whole
			if err := os.Truncate(s.path, 0); err != nil {
				return fmt.Errorf("cutting the torn header off -out: %w", err)
			}
		}
		return nil
	}
	got, err := csv.NewReader(bytes.NewReader(first)).Read()
	if err != nil || !slices.Equal(got, s.csv) {
		return usageErr("-out %s holds CSV columns %q, this run writes %q: choose another -out or the same -field flags", s.path, string(first), strings.Join(s.csv, ","))
	}
	return nil
}

// csvLine is one CSV row and its newline.
func csvLine(cells []string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(cells)
	w.Flush()
	return b.Bytes()
}

// reconcile reads the lines earlier runs of the crawl wrote. Every URL in
// the file counts as written: it is never written again, whatever the
// checkpoint says of its page (a page whose line was written just before
// the process was killed, and whose done state was not yet committed, is
// fetched again; its line is not). A last line without its newline is what
// a write cut short by a crash leaves: it is cut off, so the file holds
// whole lines only, and its URL is written again when its page is.
// Lines are counted as records of the crawl.
func (s *sink) reconcile() error {
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening -out to resume: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("reading -out to resume: %w", err)
	}
	end := bytes.LastIndexByte(b, '\n') + 1 // 0 when no line is whole
	if end < len(b) {
		if err := f.Truncate(int64(end)); err != nil {
			return fmt.Errorf("cutting the torn last line off -out: %w", err)
		}
		s.torn = len(b) - end
	}
	for line := range bytes.Lines(b[:end]) {
		var r struct {
			URL string `json:"url"`
		}
		if s.csv != nil {
			row, err := csv.NewReader(bytes.NewReader(line)).Read()
			if err == nil && len(row) > 0 && row[0] != "url" {
				r.URL = row[0]
			}
		} else if json.Unmarshal(line, &r) != nil {
			continue
		}
		if r.URL == "" || s.seen[r.URL] {
			continue
		}
		s.seen[r.URL] = true
		if u, err := url.Parse(r.URL); err == nil {
			s.perHost[strings.ToLower(u.Host)]++
		}
		s.total++
		s.earlier++
	}
	return nil
}

// record is one product: its URL, the fields in the order given, and when
// it was fetched.
type record struct {
	URL       string
	Host      string
	Values    []value // in the order of the -field flags
	FetchedAt time.Time
}

// value is one field of a record: its name and the text extracted.
type value struct {
	Name, Text string
}

// line renders r as {"url":…,<fields in order>,"fetched_at":…}.
func (r record) line() []byte {
	var b bytes.Buffer
	str := func(s string) {
		v, _ := json.Marshal(s)
		b.Write(v)
	}
	b.WriteString(`{"url":`)
	str(r.URL)
	for _, v := range r.Values {
		b.WriteByte(',')
		str(v.Name)
		b.WriteByte(':')
		str(v.Text)
	}
	b.WriteString(`,"fetched_at":`)
	str(r.FetchedAt.UTC().Format(time.RFC3339Nano))
	b.WriteString("}\n")
	return b.Bytes()
}

// write appends r unless its URL was written already. It returns the
// first write error, after which nothing more is written.
func (s *sink) write(r record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.seen[r.URL] {
		return nil
	}
	line := r.line()
	if s.csv != nil {
		row := []string{r.URL}
		for _, v := range r.Values {
			row = append(row, v.Text)
		}
		line = csvLine(append(row, r.FetchedAt.UTC().Format(time.RFC3339Nano)))
	}
	if _, err := s.f.Write(line); err != nil {
		s.err = fmt.Errorf("writing %s: %w", s.path, err)
		return s.err
	}
	s.seen[r.URL] = true
	s.perHost[strings.ToLower(r.Host)]++
	s.total++
	return nil
}

// counts returns the records written, in total and per host.
func (s *sink) counts() (int64, map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	per := make(map[string]int64, len(s.perHost))
	for h, n := range s.perHost {
		per[h] = n
	}
	return s.total, per
}

func (s *sink) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.f.Close(); err != nil && s.err == nil {
		s.err = fmt.Errorf("closing %s: %w", s.path, err)
	}
	return s.err
}
