package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// sink appends records to the -out file as JSON lines. Each line is one
// write to a file opened for appending, so a run stopped at any moment
// leaves only whole lines, and every record written is on disk before the
// next page is scored. A URL is written at most once per run.
type sink struct {
	mu      sync.Mutex
	f       *os.File
	path    string
	seen    map[string]bool
	perHost map[string]int64
	total   int64
	err     error // the first write error; the run ends as an error
}

func openSink(path string) (*sink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening -out: %w", err)
	}
	return &sink{f: f, path: path, seen: map[string]bool{}, perHost: map[string]int64{}}, nil
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
	if _, err := s.f.Write(r.line()); err != nil {
		s.err = fmt.Errorf("writing %s: %w", s.path, err)
		return s.err
	}
	s.seen[r.URL] = true
	s.perHost[breaker.HostOf(r.Host)]++
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
