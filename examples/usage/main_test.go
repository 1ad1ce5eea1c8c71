package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/rs/zerolog"
)

func TestUsageOnAHealthyStoreWithOneProductPerListingIsComplete(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 30, PerPage: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var out bytes.Buffer
	code, err := run(context.Background(), store.URL()+"/", filepath.Join(t.TempDir(), "crawl.db"), zerolog.Nop(), &out)
	if err != nil || code != 0 {
		t.Fatalf("exit %d (%v), want 0: a healthy store with one product per listing page", code, err)
	}
	if n := strings.Count(out.String(), "\n"); n != 30 {
		t.Fatalf("%d records, want 30", n)
	}
}

func TestUsageOnADegradingStoreIsTripped(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 200,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 40}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	code, err := run(context.Background(), store.URL()+"/", filepath.Join(t.TempDir(), "crawl.db"), zerolog.Nop(), io.Discard)
	if err != nil || code != 2 {
		t.Fatalf("exit %d (%v), want 2 (tripped)", code, err)
	}
	if got, bound := store.SentAfterFailing(), breaker.Standard().Settings().FailuresToTrip()+4-1; got > bound {
		t.Fatalf("%d requests into the degradation, want at most %d", got, bound)
	}
}

// TestReadmeUsageIsThisProgram: the README's Usage block is main.go, line
// for line.
func TestReadmeUsageIsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	begin, end := "<!-- usage:begin -->\n```go\n", "```\n<!-- usage:end -->"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("markers %q … %q not found in the README", begin, end)
	}
	if got := s[i+len(begin) : j]; got != string(src) {
		t.Fatalf("the README's Usage is not main.go:\nREADME:\n%s\nmain.go:\n%s", got, src)
	}
}

// A store whose listing turned into a consent shell: the run ends tripped
// (work is left) with no circuit opened, and the report says what
// happened — an invalid page — instead of sending the reader to look for
// a trip.
func TestUsageNamesInvalidPagesWhenNothingTripped(t *testing.T) {
	code, text, err := runReporting(t, testserver.Config{Products: 30, PerPage: 10,
		Scenario: testserver.Scenario{Mode: testserver.Empty}})
	if err != nil || code != 2 {
		t.Fatalf("exit %d (%v), want 2 (tripped: the listing is left to do)\n%s", code, err, text)
	}
	if !strings.Contains(text, "failed as invalid pages") || strings.Contains(text, "circuit not closed") {
		t.Fatalf("the ending does not name the invalid page, or names a circuit that never opened:\n%s", text)
	}
}

// runReporting runs the Usage against a store started with cfg and
// returns its exit code, the report it wrote to os.Stderr and its error.
func runReporting(t *testing.T, cfg testserver.Config) (int, string, error) {
	t.Helper()
	store, err := testserver.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var code int
	text := captureStderr(t, func() {
		code, err = run(context.Background(), store.URL()+"/", filepath.Join(t.TempDir(), "crawl.db"), zerolog.Nop(), io.Discard)
	})
	return code, text, err
}

// captureStderr runs f and returns what it wrote to os.Stderr.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	defer func() { os.Stderr = saved }()
	f()
	w.Close()
	return <-done
}

// The report the Usage prints agrees with itself: its per-domain records
// column is there and sums to the records line.
func TestUsageReportsRecordsPerDomainThatSumToTheTotal(t *testing.T) {
	code, text, err := runReporting(t, testserver.Config{Products: 30, PerPage: 10})
	if err != nil || code != 0 {
		t.Fatalf("exit %d (%v), want 0\n%s", code, err, text)
	}
	var total, sum int
	col, rows := -1, 0
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if _, err := fmt.Sscanf(l, "records: %d", &total); err == nil {
			continue
		}
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != "domain" {
			continue
		}
		col = slices.Index(f, "records")
		if col < 0 {
			t.Fatalf("the domain table has no records column:\n%s", text)
		}
		for _, row := range lines[i+1:] {
			cells := strings.Fields(row)
			if len(cells) == 0 {
				break
			}
			if cells[0] == "total" {
				continue
			}
			n, err := strconv.Atoi(cells[col])
			if err != nil {
				t.Fatalf("domain row %q: records cell %q: %v", row, cells[col], err)
			}
			sum += n
			rows++
		}
		break
	}
	if col < 0 || rows == 0 {
		t.Fatalf("no domain table in the report:\n%s", text)
	}
	if total != 30 || sum != total {
		t.Fatalf("records line %d, per-domain records sum to %d; want both 30:\n%s", total, sum, text)
	}
}

// SIGINT or SIGTERM under breakwater.Main cancels the run's context: the
// crawl stops sending, ends tripped (the rest is for a rescheduled run)
// and still prints its report.
func TestUsageInterruptedEndsTrippedWithItsReport(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 200, PerPage: 10,
		Scenario: testserver.Scenario{Latency: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for store.Count() < 10 {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		cancel(breakwater.ErrInterrupted)
	}()
	var code int
	var out bytes.Buffer
	text := captureStderr(t, func() {
		code, err = run(ctx, store.URL()+"/", filepath.Join(t.TempDir(), "crawl.db"), zerolog.Nop(), &out)
	})
	if err != nil || code != 2 {
		t.Fatalf("exit %d (%v), want 2 (tripped: interrupted)\n%s", code, err, text)
	}
	if !strings.Contains(text, "records:") {
		t.Fatalf("no report:\n%s", text)
	}
	if n := totalColumn(t, text, "degraded"); n != 0 {
		t.Errorf("the report counts %d degraded requests: the interruption cut them, not the site\n%s", n, text)
	}
	if n := store.Count(); n > 60 {
		t.Errorf("the store received %d requests: the crawl went on after its context was cancelled", n)
	}
	t.Logf("%d requests, %d records\n%s", store.Count(), strings.Count(out.String(), "\n"), text)
}

// totalColumn is the total row's cell of the column named col in the
// report's domain table.
func totalColumn(t *testing.T, report, col string) int {
	t.Helper()
	i := -1
	for _, l := range strings.Split(report, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "domain" {
			i = slices.Index(f, col)
		}
		if len(f) > 0 && f[0] == "total" && i > 0 {
			// The total row has no state cell.
			n, err := strconv.Atoi(f[i-1])
			if err != nil {
				t.Fatalf("total row %q: %v", l, err)
			}
			return n
		}
	}
	t.Fatalf("no %s column with a total row in the report:\n%s", col, report)
	return 0
}
