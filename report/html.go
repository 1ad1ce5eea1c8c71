package report

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HTMLDomains is how many domains the HTML format draws and lists at
// most; the others are summed into one row.
const HTMLDomains = 50

// The drawing's geometry, in the SVG's own units: the plot spans plotX to
// plotX+plotW; the state band, the bars and the axis are stacked.
const (
	svgW    = 1000
	svgH    = 92
	plotX   = 10
	plotW   = 900
	bandY   = 2
	bandH   = 14
	barsY   = 20 // top of the bars
	barsH   = 52
	axisY   = 86 // baseline of the tick labels
	tripTip = 9  // a trip's marker height
)

// htmlStyle is the page's whole style.
const htmlStyle = `
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1f2328;background:#fff;max-width:1060px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.ending{font-weight:600}.ending.complete{color:#1a7f37}.ending.tripped{color:#9a6700}.ending.empty{color:#57606a}.ending.error{color:#cf222e}
ul.findings{margin:4px 0 8px;padding-left:20px}
.note{background:#fff8c5;border:1px solid #d4a72c;padding:6px 10px;border-radius:4px}
.legend span{display:inline-block;margin-right:14px;white-space:nowrap}
.sw{display:inline-block;width:12px;height:12px;vertical-align:-1px;margin-right:4px;border:1px solid #0002}
section.domain{margin:10px 0 4px}section.domain h3{font-size:14px;margin:0;font-weight:600}
section.domain h3 small{font-weight:400;color:#57606a}
svg.timeline{display:block;width:100%;max-width:1000px;height:auto}
.band.closed,.sw.closed{fill:#dafbe1;background:#dafbe1}.band.open,.sw.open{fill:#ff8182;background:#ff8182}
.band.half-open,.sw.half-open{fill:#d4a72c;background:#d4a72c}.band.blocked,.sw.blocked{fill:#6639ba;background:#6639ba}
.band.mixed{fill:#eaeef2}
.ok,.sw.ok{fill:#2da44e;background:#2da44e}.failed,.sw.failed{fill:#cf222e;background:#cf222e}
.throttled,.sw.throttled{fill:#fb8500;background:#fb8500}.other,.sw.other{fill:#8c959f;background:#8c959f}
.pause,.sw.pause{fill:#0969da;fill-opacity:.16;background:#0969da29;stroke:#0969da;stroke-opacity:.5;stroke-width:.5}
.trip,.sw.trip{fill:#1f2328;background:#1f2328}.refused,.sw.refused{fill:#57606a;background:#57606a}
.axis{stroke:#d0d7de;stroke-width:1}.tick{font-size:9px;fill:#57606a}.peak{font-size:9px;fill:#57606a}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin-top:6px}
th,td{padding:3px 8px;border-bottom:1px solid #d8dee4;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}th{background:#f6f8fa}
tr.sum td{font-style:italic}tr.total td{font-weight:600;border-top:2px solid #8c959f}
td.state.open{color:#cf222e;font-weight:600}td.state.half-open{color:#9a6700}
dl.columns{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:8px 0}dl.columns dt{font-weight:600}dl.columns dd{margin:0}
pre{background:#f6f8fa;padding:8px;overflow:auto}
`

// drawn is one timeline of the page, with its table row.
type drawn struct {
	d      Domain
	s      *series // nil: nothing recorded
	others int     // above 0: the sum of this many domains
}

// writeHTML writes r in the HTML format (see Write).
func (r Report) writeHTML(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	e := html.EscapeString
	o := r.Outcome

	p("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	p("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n")
	// A data: icon, so that the browser asks no one for /favicon.ico.
	p("<link rel=\"icon\" href=\"data:,\">\n")
	p("<title>Crawl report: %s</title>\n<style>%s</style></head><body>\n", e(o.State.String()), htmlStyle)
	p("<h1>Crawl report</h1>\n")
	p("<p><span class=\"ending %s\">outcome: %s (exit %d)</span>: %s</p>\n", e(o.State.String()), e(o.State.String()), r.ExitCode, e(meaning[o.State]))
	switch {
	case len(o.Findings) > 0:
		p("<ul class=\"findings\">\n")
		for _, f := range worstFirst(o.Findings) {
			p("<li><b>%s</b> %s: %s</li>\n", e(f.State.String()), e(f.Kind), e(f.Reason))
		}
		p("</ul>\n")
	case o.Reason != "":
		p("<p>%s</p>\n", e(o.Reason))
	}
	p("<p>records: %d", o.Records)
	if !r.Start.IsZero() {
		p("<br>run: started %s, took %s: %d requests, %.1f a second, %s received",
			e(r.Start.Format(time.RFC3339)), e(latency(r.Took)), r.Requests, r.PagesPerS, e(size(r.Bytes)))
	}
	p("</p>\n")

	rows, rest := r.drawnRows(HTMLDomains)
	count := len(rows)
	if rest != nil {
		count += rest.others
		p("<p class=\"note\">%d domains: the %d busiest are drawn and listed (those that tripped, were held blocked, broke a selector or have dead URLs first, then by requests sent and refused); the other %d are summed in the row &ldquo;%s&rdquo;. The JSON report has every domain.</p>\n",
			count, len(rows), rest.others, e(rest.d.Domain))
	}

	tl := r.timeline
	p("<h2>Over time</h2>\n")
	if tl == nil {
		p("<p>No timeline was recorded (report.Sources.Timeline): the table alone.</p>\n")
	} else {
		t0, t1 := tl.start, tl.last
		if r.End.After(t1) {
			t1 = r.End
		}
		if !t1.After(t0) {
			t1 = t0.Add(tl.width)
		}
		p("<p class=\"legend\">")
		for _, k := range []struct{ class, what string }{{"closed", "closed"}, {"open", "open"}, {"half-open", "half-open"}, {"blocked", "held blocked (401/403)"},
			{"ok", "valid pages"}, {"failed", "failures (degraded, invalid)"}, {"throttled", "429s"}, {"other", "other answers (401, 403, 404, 410, 4xx)"},
			{"pause", "Retry-After pause"}, {"trip", "trip"}, {"refused", "requests refused (never sent)"}} {
			p("<span><i class=\"sw %s\"></i>%s</span>", k.class, e(k.what))
		}
		p("</p>\n<p>Time runs left to right from %s to the end of the run (%s); each bar is %s of requests, its height relative to the domain's busiest slice (its peak on the right).</p>\n",
			e(t0.UTC().Format("15:04:05.000")), e(latency(t1.Sub(t0))), e(latency(tl.width)))
		for _, row := range rows {
			writeTimeline(bw, tl, t0, t1, row)
		}
		if rest != nil {
			writeTimeline(bw, tl, t0, t1, *rest)
		}
	}

	r.writeHTMLTable(bw, rows, rest)
	r.writeHTMLRest(bw)
	p("</body></html>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: writing HTML: %w", err)
	}
	return nil
}

// drawnRows picks the n domains to draw, most troubled then busiest
// first, and sums the others into one row (nil when none are left).
func (r Report) drawnRows(n int) ([]drawn, *drawn) {
	var rows []drawn
	var undrawn map[string]*series // the timeline's domains no other source has
	if r.timeline != nil {
		undrawn = maps.Clone(r.timeline.domains)
	}
	for _, d := range r.Domains {
		rows = append(rows, drawn{d: d, s: undrawn[d.Domain]})
		delete(undrawn, d.Domain)
	}
	for name, s := range undrawn {
		rows = append(rows, drawn{d: s.counts(name), s: s})
	}
	rank := func(x drawn) int { // the troubled first
		d := x.d
		if d.Trips > 0 || (d.State != "closed" && d.State != Untouched) || d.SelectorBroken != nil || d.Dead > 0 || (x.s != nil && x.s.blocked) {
			return 0
		}
		return 1
	}
	slices.SortFunc(rows, func(a, b drawn) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(b.d.Requests+b.d.Refused, a.d.Requests+a.d.Refused), strings.Compare(a.d.Domain, b.d.Domain))
	})
	if len(rows) <= n {
		return rows, nil
	}
	rest := &drawn{others: len(rows) - n, s: &series{}}
	rest.d.Domain = fmt.Sprintf("the other %d domains", rest.others)
	byIndex := map[int]*slice{}
	for _, x := range rows[n:] {
		rest.d.add(x.d)
		if x.s == nil {
			continue
		}
		for _, s := range x.s.slices {
			sum := byIndex[s.index]
			if sum == nil {
				sum = &slice{index: s.index}
				byIndex[s.index] = sum
			}
			s.moved = false // a sum of domains has no one state
			sum.merge(s)
		}
	}
	for _, s := range byIndex {
		rest.s.slices = append(rest.s.slices, *s)
	}
	slices.SortFunc(rest.s.slices, func(a, b slice) int { return a.index - b.index })
	return rows[:n], rest
}

// counts is a Domain row of what s recorded, for a domain the report
// has no other source for.
func (s *series) counts(name string) Domain {
	d := Domain{Domain: name, State: s.now.String()}
	for _, x := range s.slices {
		d.OK += int64(x.ok)
		d.Failures.Degraded += int64(x.failed)
		d.Failures.Throttled += int64(x.throttled)
		d.Failures.ClientError += int64(x.other)
		d.Refused += int64(x.refused)
		d.Trips += int(x.trips)
	}
	d.Requests = d.OK + d.Failures.Degraded + d.Failures.Throttled + d.Failures.ClientError
	return d
}

// writeTimeline draws one domain's timeline from t0 to t1.
func writeTimeline(w *bufio.Writer, tl *Timeline, t0, t1 time.Time, row drawn) {
	e := html.EscapeString
	span := float64(t1.Sub(t0))
	x := func(t time.Time) float64 {
		return plotX + plotW*math.Min(1, math.Max(0, float64(t.Sub(t0))/span))
	}
	xi := func(i int) float64 { return x(t0.Add(time.Duration(i) * tl.width)) }
	last := int(t1.Sub(t0) / tl.width)
	d := row.d

	title, class, dom := d.Domain, "timeline", d.Domain
	var sub []string
	if row.others > 0 {
		class, dom = class+" others", ""
		sub = append(sub, "requests summed; no one circuit state")
	} else {
		if d.State != "" {
			sub = append(sub, d.State+" at the end")
		}
		if row.s != nil && row.s.blocked {
			sub = append(sub, "held blocked")
		}
	}
	sub = append(sub, fmt.Sprintf("%d requests", d.Requests))
	if d.Trips > 0 {
		sub = append(sub, plural(d.Trips, "trip"))
	}
	if d.Refused > 0 {
		sub = append(sub, fmt.Sprintf("%d refused", d.Refused))
	}
	if d.Failures.Throttled > 0 {
		sub = append(sub, fmt.Sprintf("%d throttled", d.Failures.Throttled))
	}
	fmt.Fprintf(w, "<section class=\"domain\"><h3>%s <small>%s</small></h3>\n", e(title), e(strings.Join(sub, ", ")))
	fmt.Fprintf(w, "<svg class=\"%s\" data-domain=\"%s\" data-t0=\"%s\" data-t1=\"%s\" data-x0=\"%d\" data-w=\"%d\" data-slice-ms=\"%s\" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"%s over time\">\n",
		class, e(dom), unixMS(t0), unixMS(t1), plotX, plotW, num(float64(tl.width)/float64(time.Millisecond)), svgW, svgH, e(title))
	fmt.Fprintf(w, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", plotX, barsY+barsH, plotX+plotW, barsY+barsH)

	s := row.s
	if s == nil {
		s = &series{}
	}
	// The state bands: each slice shows the worst state it held, runs of
	// one state drawn as one band.
	if row.others > 0 {
		fmt.Fprintf(w, "<rect class=\"band mixed\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", plotX, bandY, plotW, bandH)
	} else {
		cur, k := s.initial, 0
		runState, runFrom := cur, 0
		band := func(st state, from, to int) {
			x1, x2 := xi(from), xi(to)
			if to > last {
				x2 = plotX + plotW
			}
			fmt.Fprintf(w, "<rect class=\"band %s\" x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\"><title>%s from +%s to +%s</title></rect>\n",
				st, num(x1), bandY, num(math.Max(x2-x1, 0.5)), bandH, st, seconds3(time.Duration(from)*tl.width), seconds3(min(time.Duration(to)*tl.width, t1.Sub(t0))))
		}
		for i := 0; i <= last; i++ {
			shown := cur
			if k < len(s.slices) && s.slices[k].index == i {
				if sl := s.slices[k]; sl.moved {
					held := sl.held | 1<<cur
					for st := closed; st <= blocked; st++ {
						if held&(1<<st) != 0 && worse[st] > worse[shown] {
							shown = st
						}
					}
					cur = sl.end
				}
				k++
			}
			if shown != runState {
				band(runState, runFrom, i)
				runState, runFrom = shown, i
			}
		}
		band(runState, runFrom, last+1)
	}

	// The pauses, under the bars.
	for _, pz := range s.pauses {
		x1, x2 := x(pz.from), x(pz.until)
		fmt.Fprintf(w, "<rect class=\"pause\" x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\"><title>paused %s (Retry-After) from +%s</title></rect>\n",
			num(x1), barsY, num(math.Max(x2-x1, 1)), barsH, latency(pz.until.Sub(pz.from)), seconds3(pz.from.Sub(t0)))
	}

	// The bars: one path per class, stacked ok, failed, 429, other.
	var peak uint32
	for _, sl := range s.slices {
		peak = max(peak, sl.ok+sl.failed+sl.throttled+sl.other)
	}
	if peak > 0 {
		paths := [4]strings.Builder{}
		names := [4]string{"ok", "failed", "throttled", "other"}
		unit := float64(barsH) / float64(peak)
		for _, sl := range s.slices {
			x1 := xi(sl.index)
			bw := math.Max(xi(sl.index+1)-x1-0.3, 0.4)
			y := float64(barsY + barsH)
			for c, n := range [4]uint32{sl.ok, sl.failed, sl.throttled, sl.other} {
				if n == 0 {
					continue
				}
				h := float64(n) * unit
				y -= h
				fmt.Fprintf(&paths[c], "M%s %sh%sv%sh-%sz", num(x1), num(y), num(bw), num(h), num(bw))
			}
		}
		for c := range paths {
			if paths[c].Len() > 0 {
				fmt.Fprintf(w, "<path class=\"%s\" d=\"%s\"/>\n", names[c], paths[c].String())
			}
		}
		fmt.Fprintf(w, "<text class=\"peak\" x=\"%d\" y=\"%d\">peak %d</text><text class=\"peak\" x=\"%d\" y=\"%d\">per %s</text>\n",
			plotX+plotW+8, barsY+8, peak, plotX+plotW+8, barsY+19, latency(tl.width))
	}

	// The refusals: a mark under the band in each slice that had some.
	var refused strings.Builder
	for _, sl := range s.slices {
		if sl.refused > 0 {
			x1 := xi(sl.index)
			fmt.Fprintf(&refused, "M%s %dh%sv3h-%sz", num(x1), bandY+bandH+1, num(math.Max(xi(sl.index+1)-x1, 0.5)), num(math.Max(xi(sl.index+1)-x1, 0.5)))
		}
	}
	if refused.Len() > 0 {
		fmt.Fprintf(w, "<path class=\"refused\" d=\"%s\"><title>%d requests refused</title></path>\n", refused.String(), d.Refused)
	}

	// The trips: a marker at the slice each happened in.
	for _, sl := range s.slices {
		if sl.trips == 0 {
			continue
		}
		x1 := xi(sl.index)
		fmt.Fprintf(w, "<path class=\"trip\" d=\"M%s %dl%d %dh%dz\"><title>tripped at +%s (%d)</title></path>\n",
			num(x1), bandY+bandH+tripTip-2, -4, -tripTip, 8, seconds3(time.Duration(sl.index)*tl.width), sl.trips)
	}

	// The time axis.
	step := tickStep(t1.Sub(t0))
	for at := time.Duration(0); at <= t1.Sub(t0); at += step {
		fmt.Fprintf(w, "<text class=\"tick\" x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", num(x(t0.Add(at))), axisY, tickLabel(at, step))
	}
	fmt.Fprintf(w, "</svg></section>\n")
}

// writeHTMLTable writes the table of the Text format.
func (r Report) writeHTMLTable(w *bufio.Writer, rows []drawn, rest *drawn) {
	e := html.EscapeString
	if len(r.Domains) == 0 {
		return
	}
	cols := r.shownColumns()
	fmt.Fprintf(w, "<h2>Per domain</h2>\n<table class=\"summary\"><thead><tr><th>domain</th>")
	for _, c := range cols {
		fmt.Fprintf(w, "<th>%s</th>", e(c.head))
	}
	fmt.Fprintf(w, "</tr></thead><tbody>\n")
	line := func(d Domain, class string, state bool) {
		fmt.Fprintf(w, "<tr class=\"%s\"><td>%s</td>", class, e(d.Domain))
		for _, c := range cols {
			switch {
			case c.head != "state":
				fmt.Fprintf(w, "<td>%s</td>", e(c.cell(d)))
			case state:
				fmt.Fprintf(w, "<td class=\"state %s\">%s</td>", e(d.State), e(c.cell(d)))
			default:
				fmt.Fprintf(w, "<td></td>")
			}
		}
		fmt.Fprintf(w, "</tr>\n")
	}
	for _, row := range rows {
		if row.d.State == "" {
			continue // seen by the timeline alone
		}
		line(row.d, "domain", true)
	}
	if rest != nil {
		line(rest.d, "sum", false)
	}
	line(r.Total, "total", false)
	fmt.Fprintf(w, "</tbody></table>\n<dl class=\"columns\">\n")
	for _, c := range cols {
		fmt.Fprintf(w, "<dt>%s</dt><dd>%s</dd>\n", e(c.head), e(c.means))
	}
	fmt.Fprintf(w, "</dl>\n")
}

// writeHTMLRest writes what the Text format has under its table: the
// proxies, the dead URLs and the selector_broken diagnoses.
func (r Report) writeHTMLRest(w *bufio.Writer) {
	var b strings.Builder
	r.writeRest(&b)
	if s := strings.TrimSpace(b.String()); s != "" {
		fmt.Fprintf(w, "<h2>More</h2>\n<pre>%s</pre>\n", html.EscapeString(s))
	}
}

// plural is "1 trip", "2 trips".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// tickStep is a round step giving about eight ticks over span.
func tickStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond,
		20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute,
		2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
		3 * time.Hour, 6 * time.Hour, 12 * time.Hour} {
		if span/s <= 8 {
			return s
		}
	}
	return 24 * time.Hour
}

// tickLabel is at, in seconds below a minute's step, else as a duration.
func tickLabel(at, step time.Duration) string {
	if step < time.Minute {
		return strconv.FormatFloat(at.Seconds(), 'f', -1, 64) + " s"
	}
	return at.String()
}

// seconds3 is d in seconds to the millisecond, "1.234 s".
func seconds3(d time.Duration) string {
	return strconv.FormatFloat(seconds(d), 'f', 3, 64) + " s"
}

// unixMS is t in milliseconds since the Unix epoch, to the microsecond.
func unixMS(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMicro())/1000, 'f', 3, 64)
}

// num is a coordinate to two decimals, without trailing zeros.
func num(f float64) string {
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}
