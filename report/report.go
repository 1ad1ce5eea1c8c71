package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
)

// SchemaVersion is the JSON report's schema_version. It changes when a
// field is renamed, removed or changes meaning; reports without it are 1.
const SchemaVersion = 2

// Untouched is the State of a domain to which no request was sent in
// this run.
const Untouched = "untouched"

// Report is how a run ended and what happened on every domain.
type Report struct {
	SchemaVersion int             `json:"schema_version"`
	Outcome       outcome.Outcome `json:"outcome"`
	ExitCode      int             `json:"exit_code"` // Outcome.State.ExitCode()
	// Start and End are Sources', in UTC to the millisecond; Took is
	// End - Start.
	Start time.Time     `json:"start,omitzero"`
	End   time.Time     `json:"end,omitzero"`
	Took  time.Duration `json:"-"`
	TookS float64       `json:"took_s"`
	// Requests is Total.Requests; PagesPerS is Requests per second of
	// Took (0 without a start and an end); Bytes is Total.Bytes.
	Requests  int64   `json:"requests"`
	PagesPerS float64 `json:"pages_per_s"`
	Bytes     int64   `json:"bytes"`
	// Domains are sorted by name.
	Domains []Domain `json:"domains"`
	// Total sums the counters of every domain. Its MedianLatency is over
	// every success when Sources.Latencies gave them, else 0.
	Total Domain `json:"total"`
	// Proxies are Sources.Proxies' proxies, in their order, named by
	// host:port without credentials.
	Proxies []proxy.Snapshot `json:"proxies,omitempty"`

	timeline *Timeline // a snapshot of Sources.Timeline, for the HTML page
}

// Domain is one host's line of the report. The host is lower-case with its
// port, the key the breaker and the validator use.
type Domain struct {
	Domain string `json:"domain"`
	// State is the circuit's final state, or Untouched.
	State   string `json:"state,omitempty"`
	Profile string `json:"profile,omitempty"`
	// RetryAt is when an open circuit may be probed again.
	RetryAt time.Time `json:"retry_at,omitzero"`
	Records int64     `json:"records"` // Sources.Records
	// Requests counts the attempts that left and came back with an
	// outcome about the domain: OK, Invalid and Failures but Excluded.
	Requests int64 `json:"requests"`
	Bytes    int64 `json:"bytes"` // Sources.Bytes
	// OK counts pages that passed validation (2xx, without a validator),
	// listings included, so it may exceed Records.
	OK       int64    `json:"ok"`
	Invalid  int64    `json:"invalid"`  // 2xx pages the validator rejected
	Failures Failures `json:"failures"` // the other attempts by class
	Refused  int64    `json:"refused"`  // never sent: the circuit was open
	// Unfinished counts the URLs left for a rescheduled run: the
	// breaker's, or Sources.Unfinished's count if larger.
	Unfinished int `json:"unfinished"`
	// Dead counts URLs whose attempts are spent, as the outcome's "dead"
	// findings name them.
	Dead   int   `json:"dead"`
	Trips  int   `json:"trips"`  // times the circuit opened
	Robots int64 `json:"robots"` // Sources.Robots: never sent, never a failure
	// Pauses counts Retry-After pauses; PausedFor is the time spent in
	// them.
	Pauses     int64         `json:"pauses"`
	PausedFor  time.Duration `json:"-"`
	PausedForS float64       `json:"paused_for_s"`
	// PaceLimit and PaceGap are the pace at the end: the most requests in
	// flight (0: no limit) and the least gap between two.
	PaceLimit int           `json:"pace_limit"`
	PaceGap   time.Duration `json:"-"`
	PaceGapMS float64       `json:"pace_gap_ms"`
	// MedianLatency is the median latency of the successes: over the run
	// with Sources.Latencies, else over the breaker's recent ones.
	MedianLatency   time.Duration `json:"-"`
	MedianLatencyMS float64       `json:"median_latency_ms"`
	SelectorBroken  *Broken       `json:"selector_broken,omitempty"`
}

// Failures counts attempts that were neither valid nor invalid pages, by
// the breaker's outcome classes.
type Failures struct {
	Degraded    int64 `json:"degraded"`     // timeouts, network failures, 5xx, cut bodies
	Throttled   int64 `json:"throttled"`    // 429
	Blocked     int64 `json:"blocked"`      // 401, 403
	Gone        int64 `json:"gone"`         // 404, 410
	ClientError int64 `json:"client_error"` // other 4xx
	Excluded    int64 `json:"excluded"`     // cancelled or aborted by the crawler itself
}

// Broken is a selector_broken diagnosis: the template changed or the
// selector is wrong, a human must look.
// Its fields are validate.BrokenDomain's.
type Broken struct {
	Selectors   []string `json:"selectors"`
	Pages       int      `json:"pages"`
	ValidBefore int      `json:"valid_before"`
	Evidence    []string `json:"evidence"` // the pages' URLs
	Reason      string   `json:"reason"`
}

// Sources are what a report reads, every one optional: each field adds a
// source, and a zero Sources reads none.
type Sources struct {
	Breaker   *breaker.Breaker
	Validator *validate.Validator // for the selector_broken diagnosis
	// The maps are per domain, keyed by host as in a URL.
	Records map[string]int64 // records the program wrote
	Bytes   map[string]int64 // body bytes received
	Robots  map[string]int64 // URLs robots.txt forbade
	// Unfinished is a store's count of the URLs left to do (a
	// checkpoint's, earlier runs' included); a domain's Unfinished is the
	// larger of it and the breaker's, never their sum.
	Unfinished map[string]int
	// Latencies is every successful page's latency, so that the medians
	// are over the whole run. The slices are read, not kept.
	Latencies  map[string][]time.Duration
	Start, End time.Time // when the run started and ended
	// Proxies is the crawl's proxy pool (breaker.Config.Proxies), for a
	// line per proxy.
	Proxies *proxy.Pool
	// Timeline is the run's record over time, drawn by the HTML format.
	Timeline *Timeline
}

// New builds the report of a run that ended as o, from src.
// Call it after the crawl has finished (after c.Wait()), so the counters
// are final.
func New(o outcome.Outcome, src Sources) Report {
	doms := map[string]*Domain{}
	get := func(name string) *Domain {
		d := doms[name]
		if d == nil {
			d = &Domain{Domain: name}
			doms[name] = d
		}
		return d
	}
	// Keyed as the breaker's domains; applied once every source is read.
	unfinished, latencies := map[string]int{}, map[string][]time.Duration{}
	if b := src.Breaker; b != nil {
		for _, s := range b.Stats() {
			d := get(s.Domain)
			d.State, d.Profile, d.RetryAt = s.State.String(), s.Profile, s.RetryAt.UTC()
			for class, p := range d.byClass() {
				*p += s.Outcomes[class]
			}
			d.Refused += s.Refused
			for class, n := range s.Outcomes {
				if class != circuit.Excluded.String() {
					d.Requests += n
				}
			}
			d.Trips += s.Trips
			d.Pauses += int64(s.Pace.Pauses)
			d.PausedFor += s.Pace.PausedFor
			d.PaceLimit, d.PaceGap = s.Pace.Limit, s.Pace.Gap
			d.MedianLatency = s.MedianLatency
		}
		// Every URL counted, also past the breaker's bounded list.
		for dom, n := range b.Unfinished().PerDomain {
			get(dom).Unfinished += n
		}
	}
	if v := src.Validator; v != nil {
		for _, bk := range v.Broken() {
			br := &Broken{Selectors: slices.Clone(bk.Selectors), Pages: len(bk.Pages), ValidBefore: bk.ValidBefore,
				Reason: bk.Err().Error()}
			for _, e := range bk.Pages {
				br.Evidence = append(br.Evidence, e.URL)
			}
			get(bk.Domain).SelectorBroken = br
		}
	}
	for h, n := range src.Records {
		get(strings.ToLower(h)).Records += n
	}
	for h, n := range src.Bytes {
		get(strings.ToLower(h)).Bytes += n
	}
	for h, n := range src.Robots {
		get(strings.ToLower(h)).Robots += n
	}
	for h, n := range src.Unfinished {
		unfinished[strings.ToLower(h)] += n
	}
	for h, ls := range src.Latencies {
		latencies[strings.ToLower(h)] = append(latencies[strings.ToLower(h)], ls...)
	}
	for h, n := range unfinished {
		d := get(h)
		d.Unfinished = max(d.Unfinished, n)
	}
	var all []time.Duration
	for h, ls := range latencies {
		if len(ls) > 0 {
			get(h).MedianLatency = median(ls)
			all = append(all, ls...)
		}
	}
	for _, f := range o.Findings {
		for _, g := range f.Dead {
			get(strings.ToLower(g.Domain)).Dead += g.URLs
		}
	}

	r := Report{SchemaVersion: SchemaVersion, Outcome: o, ExitCode: o.State.ExitCode(), Domains: make([]Domain, 0, len(doms)), Total: Domain{Domain: "total"}}
	for _, d := range doms {
		if d.State == "" {
			d.State = Untouched
		}
		d.MedianLatencyMS = ms(d.MedianLatency)
		d.PausedForS = seconds(d.PausedFor)
		d.PaceGapMS = ms(d.PaceGap)
		r.Domains = append(r.Domains, *d)
	}
	slices.SortFunc(r.Domains, func(a, b Domain) int { return strings.Compare(a.Domain, b.Domain) })
	t := &r.Total
	for _, d := range r.Domains {
		t.add(d)
	}
	if len(all) > 0 {
		t.MedianLatency = median(all)
	} else if len(r.Domains) == 1 {
		t.MedianLatency = r.Domains[0].MedianLatency
	}
	t.MedianLatencyMS = ms(t.MedianLatency)
	t.PausedForS = seconds(t.PausedFor)
	r.Requests, r.Bytes = t.Requests, t.Bytes
	if src.Proxies != nil {
		r.Proxies = src.Proxies.Stats()
	}
	if src.Timeline != nil {
		r.timeline = src.Timeline.snapshot()
		if src.End.After(r.timeline.last) {
			r.timeline.last = src.End // the drawing ends with the run
		}
	}
	if !src.Start.IsZero() && !src.End.IsZero() {
		r.Start, r.End = src.Start.UTC().Round(time.Millisecond), src.End.UTC().Round(time.Millisecond)
		r.Took = r.End.Sub(r.Start)
		r.TookS = seconds(r.Took)
		if r.Took > 0 {
			r.PagesPerS = math.Round(float64(r.Requests)/r.Took.Seconds()*10) / 10
		}
	}
	return r
}

// add adds d's counters to t's; the state, the pace and the medians are
// not added.
func (t *Domain) add(d Domain) {
	t.Records += d.Records
	t.Requests += d.Requests
	t.Bytes += d.Bytes
	t.Robots += d.Robots
	from := d.byClass()
	for class, p := range t.byClass() {
		*p += *from[class]
	}
	t.Refused += d.Refused
	t.Unfinished += d.Unfinished
	t.Dead += d.Dead
	t.Trips += d.Trips
	t.Pauses += d.Pauses
	t.PausedFor += d.PausedFor
}

// byClass maps each outcome class to d's counter of it.
func (d *Domain) byClass() map[string]*int64 {
	f := &d.Failures
	return map[string]*int64{circuit.Success.String(): &d.OK, circuit.Invalid.String(): &d.Invalid,
		circuit.Degraded.String(): &f.Degraded, circuit.Throttled.String(): &f.Throttled, circuit.Blocked.String(): &f.Blocked,
		circuit.Gone.String(): &f.Gone, circuit.ClientError.String(): &f.ClientError, circuit.Excluded.String(): &f.Excluded}
}

// median is the median of ls (the upper middle of an even count, as the
// breaker's); ls is not changed.
func median(ls []time.Duration) time.Duration {
	s := slices.Clone(ls)
	slices.Sort(s)
	return s[len(s)/2]
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// seconds is d in seconds, to the millisecond.
func seconds(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)) / 1000
}

// Format is how a report is written.
type Format uint8

const (
	// Text is an aligned table for people.
	Text Format = iota
	// JSON is one indented JSON object for machines.
	JSON
	// HTML is a page for people that needs nothing but itself (no script,
	// no request to any host): per domain a timeline from
	// Sources.Timeline, then the table of the Text format.
	HTML
)

// Write writes r to w in format f. JSON is one indented JSON object and a
// newline. Text is the outcome and its findings, the run's times and
// volume, then one aligned row per domain and a total with a legend of the
// columns shown, then the URLs dead of failures by domain and cause, then
// the selector_broken diagnoses; columns for throttled, blocked, gone,
// other 4xx, robots, dead, pauses and the pace appear only when some domain
// has one.
//
// HTML draws, per domain, the circuit's state as bands (closed, open,
// half-open, blocked), the requests by how they ended over time, the
// trips and the Retry-After pauses, with the table under them. A run of
// more than HTMLDomains domains draws and lists the HTMLDomains busiest
// (those that tripped, were held blocked, broke a selector or have dead
// URLs first), sums the others into one row, and says so.
func (r Report) Write(w io.Writer, f Format) error {
	switch f {
	case HTML:
		return r.writeHTML(w)
	case JSON:
	default:
		return r.writeText(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("report: writing JSON: %w", err)
	}
	return nil
}

// meaning says what each ending asks of whoever reads the report.
var meaning = map[outcome.State]string{
	outcome.Complete: "work done",
	outcome.Tripped:  "work left for a rescheduled run; no human needed",
	outcome.Empty:    "ran to the end, nothing valid collected, nothing tripped",
	outcome.Error:    "needs a human: a retry will fail the same way",
}

// column is one column of the text table.
type column struct {
	head  string
	cell  func(d Domain) string
	zero  func(d Domain) bool // nil: shown even when every row is zero
	means string              // the legend's line
}

func count(n int64) string { return strconv.FormatInt(n, 10) }

var columns = []column{
	{head: "state", cell: func(d Domain) string { return dash(d.State) },
		means: "the circuit at the end: closed, open, half-open; untouched: no request sent this run"},
	{head: "records", cell: func(d Domain) string { return count(d.Records) }, zero: func(d Domain) bool { return d.Records == 0 },
		means: "records written: one per valid page that makes one (a product page, say)"},
	{head: "valid", cell: func(d Domain) string { return count(d.OK) },
		means: "pages that passed validation, listings included: it may exceed records"},
	{head: "invalid", cell: func(d Domain) string { return count(d.Invalid) },
		means: "2xx pages the validator rejected (they count against the site)"},
	{head: "degraded", cell: func(d Domain) string { return count(d.Failures.Degraded) },
		means: "timeouts, refused or reset connections, 5xx, cut bodies, DNS failures (count against the site)"},
	{head: "throttled", cell: func(d Domain) string { return count(d.Failures.Throttled) }, zero: func(d Domain) bool { return d.Failures.Throttled == 0 },
		means: "429 answers (the URL is sent again after the pause; never trips)"},
	{head: "blocked", cell: func(d Domain) string { return count(d.Failures.Blocked) }, zero: func(d Domain) bool { return d.Failures.Blocked == 0 },
		means: "401 and 403 answers: a client problem, never trips"},
	{head: "gone", cell: func(d Domain) string { return count(d.Failures.Gone) }, zero: func(d Domain) bool { return d.Failures.Gone == 0 },
		means: "404 and 410 answers: no such page, not retried"},
	{head: "other4xx", cell: func(d Domain) string { return count(d.Failures.ClientError) }, zero: func(d Domain) bool { return d.Failures.ClientError == 0 },
		means: "other 4xx answers"},
	{head: "refused", cell: func(d Domain) string { return count(d.Refused) },
		means: "requests the breaker held back while the circuit was open: never sent"},
	{head: "robots", cell: func(d Domain) string { return count(d.Robots) }, zero: func(d Domain) bool { return d.Robots == 0 },
		means: "URLs robots.txt forbids: never sent, not a failure, not unfinished"},
	{head: "unfinished", cell: func(d Domain) string { return strconv.Itoa(d.Unfinished) },
		means: "URLs left to do for a rescheduled run (refused, failed with attempts left, not yet sent)"},
	{head: "dead", cell: func(d Domain) string { return strconv.Itoa(d.Dead) }, zero: func(d Domain) bool { return d.Dead == 0 },
		means: "URLs whose attempts are spent on failures: listed below, a person decides"},
	{head: "trips", cell: func(d Domain) string { return strconv.Itoa(d.Trips) },
		means: "times the circuit opened"},
	{head: "pauses", cell: func(d Domain) string { return count(d.Pauses) }, zero: func(d Domain) bool { return d.Pauses == 0 },
		means: "Retry-After pauses taken"},
	{head: "paused", cell: func(d Domain) string { return latency(d.PausedFor) }, zero: func(d Domain) bool { return d.PausedFor == 0 },
		means: "time spent in those pauses"},
	{head: "inflight", cell: func(d Domain) string { return limit(d.PaceLimit) }, zero: paceZero,
		means: "the pace at the end: requests in flight at most (-: no limit of Breakwater's)"},
	{head: "gap", cell: func(d Domain) string { return latency(d.PaceGap) }, zero: paceZero,
		means: "the pace at the end: least time between two requests (-: none)"},
	{head: "median", cell: func(d Domain) string { return latency(d.MedianLatency) },
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
		for _, f := range worstFirst(o.Findings) {
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
		cols := r.shownColumns()
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

	r.writeRest(bw)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: writing text: %w", err)
	}
	return nil
}

// worstFirst returns fs with what decided the ending first: errors, then
// trips.
func worstFirst(fs []outcome.Finding) []outcome.Finding {
	fs = slices.Clone(fs)
	slices.SortStableFunc(fs, func(a, b outcome.Finding) int { return int(b.State) - int(a.State) })
	return fs
}

// writeRest writes what follows the table: the proxies, the dead URLs
// and the selector_broken diagnoses.
func (r Report) writeRest(w io.Writer) {
	r.writeProxies(w)
	r.writeDead(w)
	for _, d := range r.Domains {
		if b := d.SelectorBroken; b != nil {
			fmt.Fprintf(w, "\n%s\n", b.Reason)
			for _, u := range b.Evidence {
				fmt.Fprintf(w, "  evidence: %s\n", u)
			}
		}
	}
}

// writeProxies writes a line per proxy: its state, the requests the
// rotation gave it, and what they said of it.
func (r Report) writeProxies(w io.Writer) {
	if len(r.Proxies) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "proxy\tstate\tsent\tejections\toutcomes")
	unblamed := false
	for _, p := range r.Proxies {
		unblamed = unblamed || p.Outcomes["not_judged"] > 0
		var outs []string
		for name, n := range p.Outcomes {
			outs = append(outs, fmt.Sprintf("%s %d", name, n))
		}
		slices.Sort(outs)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", p.Name, p.State, p.Sent, p.Ejections, dash(strings.Join(outs, ", ")))
	}
	tw.Flush()
	if unblamed {
		fmt.Fprintln(w, "  not_judged: no proxy was blamed; a failure among them counts against its site (the degraded column), a cancelled request against no one")
	}
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

// shownColumns are the columns always shown, and the others where some
// domain has a non-zero value.
func (r Report) shownColumns() []column {
	var cols []column
	for _, c := range columns {
		if c.zero == nil || slices.ContainsFunc(r.Domains, func(d Domain) bool { return !c.zero(d) }) {
			cols = append(cols, c)
		}
	}
	return cols
}
