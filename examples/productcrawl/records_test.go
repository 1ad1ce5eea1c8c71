package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// productRecord is the record of product n as a crawl writes it.
func productRecord(n int) record {
	u := "http://127.0.0.1:8080/products/sku-" + strconv.Itoa(n)
	return record{URL: u, Host: "127.0.0.1:8080", Values: []value{{"title", "Product " + strconv.Itoa(n)}, {"price", "$1.00"}},
		FetchedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
}

// checkWholeLines fails unless the file at path is lines of JSON, each
// with its newline, with the URLs want in that order.
func checkWholeLines(t *testing.T, path string, want ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("the file ends without a newline: %q", b)
	}
	var got []string
	for line := range bytes.Lines(b) {
		var r struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Errorf("line %d is not JSON (%v): %q", len(got)+1, err, line)
		}
		got = append(got, r.URL)
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines %q, want %d %q", len(got), got, len(want), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d is %q, want %q", i+1, got[i], want[i])
		}
	}
}

// A run killed in the middle of a write leaves its last line torn: no
// newline, perhaps not even whole JSON. --resume cuts the torn bytes off
// before it appends anything, so the next record starts a line of its own
// and the file holds whole JSON lines only; the torn line's URL does not
// count as written, and is written again when its page is.
func TestResumeCutsATornLastLineOfTheOutput(t *testing.T) {
	one, two, three := productRecord(1), productRecord(2), productRecord(3)
	whole := append(one.line(), two.line()...)
	for name, tc := range map[string]struct {
		before []byte // whole lines before the torn one
		torn   []byte
	}{
		"cut inside the URL":     {whole, three.line()[:20]},
		"cut before the newline": {whole, bytes.TrimSuffix(three.line(), []byte("\n"))},
		"only a torn line":       {nil, three.line()[:len(three.line())/2]},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "products.jsonl")
			if err := os.WriteFile(path, append(bytes.Clone(tc.before), tc.torn...), 0o644); err != nil {
				t.Fatal(err)
			}
			earlier := []string{}
			for line := range bytes.Lines(tc.before) {
				var r struct {
					URL string `json:"url"`
				}
				_ = json.Unmarshal(line, &r)
				earlier = append(earlier, r.URL)
			}

			s, err := openSink(path, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, tc.before) {
				t.Errorf("after --resume opened it the file is\n%q\nwant the whole lines only\n%q", after, tc.before)
			}
			if total, _ := s.counts(); s.torn != len(tc.torn) || s.earlier != int64(len(earlier)) || total != int64(len(earlier)) {
				t.Errorf("torn %d, earlier %d, total %d; want %d bytes cut and %d records counted", s.torn, s.earlier, total, len(tc.torn), len(earlier))
			}
			if err := s.write(three); err != nil {
				t.Fatal(err)
			}
			if err := s.close(); err != nil {
				t.Fatal(err)
			}
			checkWholeLines(t, path, append(earlier, three.URL)...)

			// Resumed again: nothing torn, every line counted, none written twice.
			s, err = openSink(path, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.write(three); err != nil {
				t.Fatal(err)
			}
			if err := s.close(); err != nil {
				t.Fatal(err)
			}
			if s.torn != 0 || s.earlier != int64(len(earlier)+1) {
				t.Errorf("second resume: torn %d, earlier %d; want 0 and %d", s.torn, s.earlier, len(earlier)+1)
			}
			checkWholeLines(t, path, append(earlier, three.URL)...)
		})
	}
}
