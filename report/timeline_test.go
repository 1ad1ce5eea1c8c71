package report_test

import (
	"bytes"
	"cmp"
	"fmt"
	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
)

// tlRun is a breaker and a timeline on one fake clock.
type tlRun struct {
	clk   *clocktest.Fake
	b     *breaker.Breaker
	tl    *report.Timeline
	hooks observe.Hooks // the timeline's, to tell it events the breaker did not make
}

// hookSubject is a Subject that keeps the hooks it is given.
type hookSubject struct{ h *observe.Hooks }

func (s hookSubject) Hook(h observe.Hooks) error { *s.h = h; return nil }

func newTLRun(t testing.TB, cfg report.TimelineConfig) *tlRun {
	t.Helper()
	clk := clocktest.NewFake(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clock = clk
	tl := report.NewTimeline(cfg)
	r := &tlRun{clk: clk, b: b, tl: tl}
	if err := cmp.Or(tl.Observe(b), tl.Observe(hookSubject{&r.hooks})); err != nil {
		t.Fatal(err)
	}
	return r
}

// send sends n requests to host, each ending as c, step apart; a refusal
// is told to the timeline as the breaker tells it.
func (r *tlRun) send(host string, c circuit.Class, n int, step time.Duration) {
	for range n {
		tk, err := r.b.Allow(host)
		if err != nil {
			if oe, ok := err.(*circuit.OpenError); ok {
				r.hooks.OnRefused(nil, oe)
			}
		} else {
			r.b.Record(tk, circuit.Result{Class: c, Latency: 10 * time.Millisecond})
			r.hooks.OnAttempt(observe.Attempt{Domain: host, Result: circuit.Result{Class: c}})
		}
		r.clk.Advance(step)
	}
}

func (r *tlRun) page(t *testing.T) string {
	t.Helper()
	rep := report.New(outcome.Decide(1, r.b), report.Sources{Breaker: r.b, Timeline: r.tl, End: r.clk.Now()})
	var buf bytes.Buffer
	if err := rep.Write(&buf, report.HTML); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// svgOf returns the timeline drawn for domain.
func svgOf(t *testing.T, page, domain string) string {
	t.Helper()
	i := strings.Index(page, `data-domain="`+domain+`"`)
	if i < 0 {
		t.Fatalf("no timeline for %s in the page", domain)
	}
	j := strings.Index(page[i:], "</svg>")
	return page[i : i+j]
}

var (
	bandRE = regexp.MustCompile(`<rect class="band ([a-z-]+)" x="([0-9.]+)" y="\d+" width="([0-9.]+)"`)
	attrRE = regexp.MustCompile(`data-(t0|t1|x0|w|slice-ms)="([0-9.]+)"`)
)

type band struct {
	state    string
	x, width float64
}

func bandsOf(svg string) []band {
	var bs []band
	for _, m := range bandRE.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[2], 64)
		w, _ := strconv.ParseFloat(m[3], 64)
		bs = append(bs, band{m[1], x, w})
	}
	return bs
}

// xOf is where the timeline svg draws time at, and a slice's width.
func xOf(t *testing.T, svg string, at time.Time) (x, slice float64) {
	t.Helper()
	a := map[string]float64{}
	for _, m := range attrRE.FindAllStringSubmatch(svg, -1) {
		a[m[1]], _ = strconv.ParseFloat(m[2], 64)
	}
	ms := float64(at.UnixMicro()) / 1000
	span := a["t1"] - a["t0"]
	return a["x0"] + a["w"]*(ms-a["t0"])/span, a["w"] * a["slice-ms"] / span
}

// The open band starts where the circuit tripped and ends where its
// cooldown let a probe through; half-open and closed follow.
func TestTimelineDrawsTheOpenBandWhereTheCircuitTripped(t *testing.T) {
	r := newTLRun(t, report.TimelineConfig{})
	r.send("a.example", circuit.Success, 20, 50*time.Millisecond)
	r.send("b.example", circuit.Success, 20, 50*time.Millisecond) // 2 s
	r.send("b.example", circuit.Degraded, 10, 50*time.Millisecond)
	tripped := r.clk.Now().Add(-50 * time.Millisecond)
	r.send("b.example", circuit.Success, 5, 100*time.Millisecond) // refused
	r.clk.Advance(time.Minute)                                    // the standard cooldown
	probed := r.clk.Now()
	r.send("b.example", circuit.Success, 5, 100*time.Millisecond)

	page := r.page(t)
	if n := strings.Count(page, `<svg class="timeline"`); n != 2 {
		t.Fatalf("%d timelines, want one per domain (2)", n)
	}
	if bs := bandsOf(svgOf(t, page, "a.example")); len(bs) != 1 || bs[0].state != "closed" {
		t.Errorf("the healthy domain's bands: %v; want one closed band", bs)
	}
	svg := svgOf(t, page, "b.example")
	var states []string
	for _, b := range bandsOf(svg) {
		states = append(states, b.state)
	}
	if got := strings.Join(states, " "); got != "closed open half-open closed" {
		t.Fatalf("bands %q, want closed open half-open closed", got)
	}
	bs := bandsOf(svg)
	want, slice := xOf(t, svg, tripped)
	if open := bs[1]; open.x > want+0.01 || open.x < want-slice-0.01 {
		t.Errorf("the open band starts at x=%.2f; the trip is at x=%.2f (a slice is %.2f wide)", open.x, want, slice)
	}
	end, _ := xOf(t, svg, probed)
	if open := bs[1]; open.x+open.width < end-slice-0.01 || open.x+open.width > end+slice+0.01 {
		t.Errorf("the open band ends at x=%.2f; the probe left at x=%.2f", open.x+open.width, end)
	}
	if !strings.Contains(svg, `class="trip"`) {
		t.Error("no trip marked")
	}
}

// A run longer than the buckets cover merges neighbours: the counts stay,
// the slices stay within Buckets.
func TestTimelineMergesSlicesWhenTheRunOutgrowsThem(t *testing.T) {
	r := newTLRun(t, report.TimelineConfig{Buckets: 8, Resolution: time.Millisecond})
	r.send("a.example", circuit.Success, 1000, 7*time.Millisecond)
	page := r.page(t)
	svg := svgOf(t, page, "a.example")
	bars := regexp.MustCompile(`<path class="ok" d="([^"]*)"`).FindStringSubmatch(svg)
	if bars == nil {
		t.Fatalf("no bars:\n%s", svg)
	}
	if n := strings.Count(bars[1], "M"); n > 8 || n < 6 {
		t.Errorf("%d bars, want at most the 8 buckets (and most of them used)", n)
	}
	if !strings.Contains(page, "1000 requests") {
		t.Errorf("the merged timeline lost requests:\n%s", svg)
	}
	if !regexp.MustCompile(`peak 1[0-9]{2}</text><text class="peak" x="\d+" y="\d+">per 1(\.\d)?s`).MatchString(svg) {
		t.Errorf("want a peak of over 100 requests per slice of about a second: %s", regexp.MustCompile(`peak [^<]*`).FindString(svg))
	}
}

// A 429's pause is drawn from the answer to its end; a domain held for
// answering 401/403 has a blocked band from its first refusal on.
func TestTimelineDrawsPausesAndTheBlockedHold(t *testing.T) {
	r := newTLRun(t, report.TimelineConfig{})
	r.send("a.example", circuit.Success, 10, 100*time.Millisecond)
	paused := r.clk.Now()
	r.hooks.OnAttempt(observe.Attempt{Domain: "a.example", Result: circuit.Result{Class: circuit.Throttled}, PausedUntil: paused.Add(2 * time.Second)})
	r.clk.Advance(3 * time.Second)
	r.send("a.example", circuit.Success, 10, 100*time.Millisecond)

	r.send("c.example", circuit.Success, 10, 10*time.Millisecond)
	held := r.clk.Now()
	r.hooks.OnRefused(nil, &circuit.OpenError{Key: "c.example", Blocked: true, RetryAt: held.Add(time.Minute)})
	r.clk.Advance(time.Second)

	page := r.page(t)
	svg := svgOf(t, page, "a.example")
	m := regexp.MustCompile(`<rect class="pause" x="([0-9.]+)" y="\d+" width="([0-9.]+)"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no pause drawn:\n%s", svg)
	}
	x, _ := strconv.ParseFloat(m[1], 64)
	w, _ := strconv.ParseFloat(m[2], 64)
	from, _ := xOf(t, svg, paused)
	until, _ := xOf(t, svg, paused.Add(2*time.Second))
	if d, e := x-from, x+w-until; d > 0.5 || d < -0.5 || e > 0.5 || e < -0.5 {
		t.Errorf("the pause spans x=%.2f to %.2f, want %.2f to %.2f", x, x+w, from, until)
	}
	if !strings.Contains(svg, "paused 2s (Retry-After)") {
		t.Errorf("the pause does not say how long: %s", svg)
	}
	bs := bandsOf(svgOf(t, page, "c.example"))
	if len(bs) != 2 || bs[0].state != "closed" || bs[1].state != "blocked" {
		t.Fatalf("the held domain's bands: %v, want closed then blocked", bs)
	}
	want, slice := xOf(t, svgOf(t, page, "c.example"), held)
	if bs[1].x > want+0.01 || bs[1].x < want-slice-0.01 {
		t.Errorf("the blocked band starts at x=%.2f, the hold at x=%.2f", bs[1].x, want)
	}
}

// More domains than the page draws: the busiest are drawn and listed,
// tripped ones first, the rest summed in one row, and the page says so.
func TestHTMLDrawsTheBusiestDomainsAndSumsTheRest(t *testing.T) {
	r := newTLRun(t, report.TimelineConfig{})
	const n = report.HTMLDomains + 10
	for i := range n {
		r.send(fmt.Sprintf("d%03d.example", i), circuit.Success, i+1, time.Millisecond)
	}
	r.send("sick.example", circuit.Degraded, 10, time.Millisecond) // few requests, but tripped
	page := r.page(t)
	if got := strings.Count(page, `<svg class="timeline`); got != report.HTMLDomains+1 {
		t.Errorf("%d timelines drawn, want %d and one for the rest", got, report.HTMLDomains+1)
	}
	if !strings.Contains(page, `data-domain="sick.example"`) {
		t.Error("the tripped domain is not drawn")
	}
	if strings.Contains(page, `data-domain="d000.example"`) || !strings.Contains(page, `data-domain="d059.example"`) {
		t.Error("want the busiest drawn, the quietest summed")
	}
	if !strings.Contains(page, fmt.Sprintf("%d domains: the %d busiest are drawn and listed", n+1, report.HTMLDomains)) ||
		!strings.Contains(page, "the other 11 domains") {
		t.Errorf("the page does not say that it sums the rest")
	}
	if got := strings.Count(page, `<tr class="domain">`); got != report.HTMLDomains {
		t.Errorf("%d table rows, want %d", got, report.HTMLDomains)
	}
	// 1+…+11 requests in the summed row.
	if !regexp.MustCompile(`<tr class="sum"><td>the other 11 domains</td><td></td><td>66</td>`).MatchString(page) {
		t.Errorf("the summed row: %s", regexp.MustCompile(`<tr class="sum">.*`).FindString(page))
	}
}

// The page asks no host for anything: no script, no external resource.
func TestHTMLNeedsNothingButItself(t *testing.T) {
	r := newTLRun(t, report.TimelineConfig{})
	r.send("a.example", circuit.Success, 10, time.Millisecond)
	r.send("a.example", circuit.Degraded, 10, time.Millisecond)
	page := r.page(t)
	for _, bad := range []string{"<script", " src=", "@import", "url(", "<link rel=\"stylesheet\""} {
		if strings.Contains(page, bad) {
			t.Errorf("the page has %q", bad)
		}
	}
	if got := regexp.MustCompile(`https?://[^"]*`).FindAllString(page, -1); len(got) != strings.Count(page, "<svg ") {
		t.Errorf("addresses in the page: %v; want only the SVG namespace", got)
	}
}

// Without a timeline the page still has the table, and says why it has
// no drawing.
func TestHTMLWithoutATimelineHasTheTable(t *testing.T) {
	r := newTLRun(t, report.TimelineConfig{})
	r.send("a.example", circuit.Success, 3, time.Millisecond)
	rep := report.New(outcome.Decide(3, r.b), report.Sources{Breaker: r.b})
	var buf bytes.Buffer
	if err := rep.Write(&buf, report.HTML); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, "<svg") || !strings.Contains(page, "No timeline was recorded") ||
		!strings.Contains(page, `<tr class="domain"><td>a.example</td><td class="state closed">closed</td>`) {
		t.Errorf("page without a timeline:\n%s", page)
	}
}

// Through a real collector: a store that answers 429 (Retry-After: 1) for
// a while is drawn with its 429s and a pause of a second at least from
// the first, and its circuit stays closed.
func TestTimelineOfARealCrawlDrawsThe429sAndTheirPause(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 12, PerPage: 12,
		Scenario: testserver.Scenario{Mode: testserver.Throttle, After: 4, RecoverAfter: 1500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		t.Fatal(err)
	}
	tl := report.NewTimeline(report.TimelineConfig{})
	if err := tl.Observe(b); err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector(colly.Async(true))
	if err := breakwater.Use(c, b); err != nil {
		t.Fatal(err)
	}
	c.OnHTML(testserver.ProductLinkSelector, func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	c.Visit(store.URL() + "/")
	c.Wait()

	rep := report.New(outcome.Decide(1, b), report.Sources{Breaker: b, Timeline: tl, End: time.Now()})
	var buf bytes.Buffer
	if err := rep.Write(&buf, report.HTML); err != nil {
		t.Fatal(err)
	}
	svg := svgOf(t, buf.String(), store.Host())
	d, _ := domainOf(rep, store.Host())
	if d.Failures.Throttled == 0 {
		t.Fatalf("the store throttled nothing: %+v", d)
	}
	if !strings.Contains(buf.String(), fmt.Sprintf("%d throttled", d.Failures.Throttled)) || !strings.Contains(svg, `<path class="throttled"`) {
		t.Errorf("the %d 429s are not drawn:\n%s", d.Failures.Throttled, svg)
	}
	// Each 429 pauses the domain a second; pauses that overlap are one.
	m := regexp.MustCompile(`<rect class="pause" x="([0-9.]+)" y="\d+" width="([0-9.]+)"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no pause drawn:\n%s", svg)
	}
	w, _ := strconv.ParseFloat(m[2], 64)
	now := time.Now()
	x1, _ := xOf(t, svg, now)
	x2, _ := xOf(t, svg, now.Add(time.Second))
	if w < x2-x1-1 {
		t.Errorf("the pause is %.1f wide, want a second's (%.1f) at least", w, x2-x1)
	}
	if bs := bandsOf(svg); len(bs) != 1 || bs[0].state != "closed" {
		t.Errorf("bands %v: a 429 never trips", bs)
	}
}
