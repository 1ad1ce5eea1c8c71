package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/breakwater-crawl/breakwater/outcome"
)

// meaning says what each ending asks of whoever reads the report.
var meaning = map[outcome.State]string{
	outcome.Complete: "work done",
	outcome.Tripped:  "work left for a rescheduled run; no human needed",
	outcome.Empty:    "ran to the end, nothing valid collected, nothing tripped",
	outcome.Error:    "needs a human: a retry will fail the same way",
}

// rank orders findings by how much they weigh on the ending.
var rank = map[outcome.State]int{outcome.Error: 0, outcome.Tripped: 1, outcome.Empty: 2, outcome.Complete: 3}

// column is one column of the text table.
type column struct {
	head   string
	always bool // shown even when every row is zero
	cell   func(d Domain) string
	zero   func(d Domain) bool
	means  string // the legend's line
}

func count(n int64) string { return strconv.FormatInt(n, 10) }

var columns = []column{
	{head: "state", always: true, cell: func(d Domain) string { return dash(d.State) },
		means: "the circuit at the end: closed, open, half-open; untouched: no request sent this run"},
	{head: "records", cell: func(d Domain) string { return count(d.Records) }, zero: func(d Domain) bool { return d.Records == 0 },
		means: "records written: one per valid page that makes one (a product page, say)"},
	{head: "valid", always: true, cell: func(d Domain) string { return count(d.OK) },
		means: "pages that passed validation, listings included: it may exceed records"},
	{head: "invalid", always: true, cell: func(d Domain) string { return count(d.Invalid) },
		means: "2xx pages the validator rejected (they count against the site)"},
	{head: "degraded", always: true, cell: func(d Domain) string { return count(d.Failures.Degraded) },
		means: "timeouts, refused or reset connections, 5xx, cut bodies, DNS failures (count against the site)"},
	{head: "throttled", cell: func(d Domain) string { return count(d.Failures.Throttled) }, zero: func(d Domain) bool { return d.Failures.Throttled == 0 },
		means: "429 answers (the URL is sent again after the pause; never trips)"},
	{head: "blocked", cell: func(d Domain) string { return count(d.Failures.Blocked) }, zero: func(d Domain) bool { return d.Failures.Blocked == 0 },
		means: "401 and 403 answers: a client problem, never trips"},
	{head: "gone", cell: func(d Domain) string { return count(d.Failures.Gone) }, zero: func(d Domain) bool { return d.Failures.Gone == 0 },
		means: "404 and 410 answers: no such page, not retried"},
	{head: "other4xx", cell: func(d Domain) string { return count(d.Failures.ClientError) }, zero: func(d Domain) bool { return d.Failures.ClientError == 0 },
		means: "other 4xx answers"},
	{head: "refused", always: true, cell: func(d Domain) string { return count(d.Refused) },
		means: "requests the breaker held back while the circuit was open: never sent"},
	{head: "robots", cell: func(d Domain) string { return count(d.Robots) }, zero: func(d Domain) bool { return d.Robots == 0 },
		means: "URLs robots.txt forbids: never sent, not a failure, not unfinished"},
	{head: "unfinished", always: true, cell: func(d Domain) string { return strconv.Itoa(d.Unfinished) },
		means: "URLs left to do for a rescheduled run (refused, failed with attempts left, not yet sent)"},
	{head: "dead", cell: func(d Domain) string { return strconv.Itoa(d.Dead) }, zero: func(d Domain) bool { return d.Dead == 0 },
		means: "URLs whose attempts are spent on failures: listed below, a person decides"},
	{head: "trips", always: true, cell: func(d Domain) string { return strconv.Itoa(d.Trips) },
		means: "times the circuit opened"},
	{head: "pauses", cell: func(d Domain) string { return count(d.Pauses) }, zero: func(d Domain) bool { return d.Pauses == 0 },
		means: "Retry-After pauses taken"},
	{head: "paused", cell: func(d Domain) string { return latency(d.PausedFor) }, zero: func(d Domain) bool { return d.PausedFor == 0 },
		means: "time spent in those pauses"},
	{head: "inflight", cell: func(d Domain) string { return limit(d.PaceLimit) }, zero: paceZero,
		means: "the pace at the end: requests in flight at most (-: no limit of Breakwater's)"},
	{head: "gap", cell: func(d Domain) string { return latency(d.PaceGap) }, zero: paceZero,
		means: "the pace at the end: least time between two requests (-: none)"},
	{head: "median", always: true, cell: func(d Domain) string { return latency(d.MedianLatency) },
		means: "median latency of the successful pages (total: over all of them, - when unknown)"},
}

// paceZero hides the pace columns unless some domain was slowed down.
func paceZero(d Domain) bool { return d.PaceGap == 0 && d.Pauses == 0 }

func limit(n int) string {
	if n <= 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// latency is d rounded for reading: "-" for none, "850µs", "31ms", "1.2s".
func latency(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(100 * time.Millisecond).String()
	}
}

// writeText writes r in the Text format (see Write).
func (r Report) writeText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	o := r.Outcome
	fmt.Fprintf(bw, "outcome: %s (exit %d): %s\n", o.State, r.ExitCode, meaning[o.State])
	switch {
	case len(o.Findings) > 0:
		// What decided the ending first: errors, then trips.
		fs := slices.Clone(o.Findings)
		slices.SortStableFunc(fs, func(a, b outcome.Finding) int { return rank[a.State] - rank[b.State] })
		for _, f := range fs {
			fmt.Fprintf(bw, "  %-8s %s: %s\n", f.State, f.Kind, f.Reason)
		}
	case o.Reason != "":
		fmt.Fprintf(bw, "  %s\n", o.Reason)
	}
	fmt.Fprintf(bw, "records: %d\n", o.Records)
	if !r.Start.IsZero() {
		fmt.Fprintf(bw, "run: started %s, took %s: %d requests, %.1f a second, %s received\n",
			r.Start.Format(time.RFC3339), latency(r.Took), r.Requests, r.PagesPerS, size(r.Bytes))
	}

	if len(r.Domains) > 0 {
		fmt.Fprintln(bw)
		var cols []column
		for _, c := range columns {
			if c.always || r.any(c) {
				cols = append(cols, c)
			}
		}
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		heads := []string{"domain"}
		for _, c := range cols {
			heads = append(heads, c.head)
		}
		fmt.Fprintln(tw, strings.Join(heads, "\t"))
		rows := append(r.Domains[:len(r.Domains):len(r.Domains)], r.Total)
		for i, d := range rows {
			cells := []string{d.Domain}
			for _, c := range cols {
				if i == len(rows)-1 && c.head == "state" {
					cells = append(cells, "") // the total has no state
					continue
				}
				cells = append(cells, c.cell(d))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		tw.Flush()
		fmt.Fprintln(bw, "\ncolumns:")
		tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		for _, c := range cols {
			fmt.Fprintf(tw, "  %s\t%s\n", c.head, c.means)
		}
		tw.Flush()
	}

	r.writeDead(bw)
	for _, d := range r.Domains {
		if b := d.SelectorBroken; b != nil {
			fmt.Fprintf(bw, "\n%s\n", b.Reason)
			for _, u := range b.Evidence {
				fmt.Fprintf(bw, "  evidence: %s\n", u)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: writing text: %w", err)
	}
	return nil
}

// writeDead lists the URLs dead of failures by domain and cause, with
// their samples, one aligned line each.
func (r Report) writeDead(w io.Writer) {
	var groups []outcome.Dead
	for _, f := range r.Outcome.Findings {
		groups = append(groups, f.Dead...)
	}
	if len(groups) == 0 {
		return
	}
	fmt.Fprintln(w, "\ndead of failures, by domain and cause (a person decides; re-drive them once fixed):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range groups {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", g.Domain, g.Cause, g.URLs, strings.Join(g.Samples, " "))
	}
	tw.Flush()
}

// size is n bytes for reading: "512 B", "3.4 kB", "2.1 MB".
func size(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1000*1000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + " kB"
	case n < 1000*1000*1000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
	}
	return strconv.FormatFloat(float64(n)/1e9, 'f', 1, 64) + " GB"
}

// any reports whether some domain has a non-zero value in column c.
func (r Report) any(c column) bool {
	for _, d := range r.Domains {
		if !c.zero(d) {
			return true
		}
	}
	return false
}
