package report_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// crawl runs a real collector with the breaker and the validator over the
// fleet's stores, plus the extra URLs, and returns the report and how many
// records (valid product pages) each host produced.
func crawl(t *testing.T, fleet *testserver.Fleet, extra ...string) (report.Report, *breaker.Breaker, *validate.Validator) {
	t.Helper()
	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.Require("ul.products")},
		Pages: []validate.Page{
			{Pattern: `/products/`, Checks: []validate.Check{validate.Require(testserver.TitleSelector)}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Validator: v})
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector(colly.Async(true))
	for _, s := range fleet.Stores {
		if err := c.Limit(&colly.LimitRule{DomainRegexp: "^" + regexp.QuoteMeta(s.Host()) + "$", Parallelism: 2}); err != nil {
			t.Fatal(err)
		}
	}
	breakwater.Use(c, v, b)
	records := map[string]*atomic.Int64{}
	for _, s := range fleet.Stores {
		records[s.Host()] = new(atomic.Int64)
	}
	c.OnHTML(testserver.ProductLinkSelector+", "+testserver.NextSelector, func(e *colly.HTMLElement) {
		e.Request.Visit(e.Attr("href"))
	})
	c.OnScraped(func(r *colly.Response) {
		if vd, ok := v.VerdictOf(r); ok && vd.Valid() && strings.Contains(r.Request.URL.Path, "/products/") {
			records[r.Request.URL.Host].Add(1)
		}
	})
	for _, s := range fleet.Stores {
		c.Visit(s.URL() + "/")
	}
	for _, u := range extra {
		c.Visit(u)
	}
	c.Wait()

	perHost := map[string]int64{}
	var total int64
	for h, n := range records {
		perHost[h] = n.Load()
		total += n.Load()
	}
	o := outcome.Decide(total, b)
	return report.New(o, report.Sources{Breaker: b, Validator: v, Records: perHost}), b, v
}

func startFleet(t *testing.T, cfgs ...testserver.Config) *testserver.Fleet {
	t.Helper()
	f, err := testserver.StartFleet(cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestReportCountsWhatEachStoreServed(t *testing.T) {
	fleet := startFleet(t,
		testserver.Config{Products: 30, PerPage: 10},
		testserver.Config{Products: 80, PerPage: 80, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 15}},
		testserver.Config{Products: 20, PerPage: 20, Scenario: testserver.Scenario{Mode: testserver.Restyled}},
	)
	healthy, degrading, restyled := fleet.Stores[0], fleet.Stores[1], fleet.Stores[2]
	r, b, _ := crawl(t, fleet, healthy.URL()+"/products/sku-999") // a 404: the gone column shows

	if len(r.Domains) != 3 {
		t.Fatalf("%d domains in the report, want 3: %+v", len(r.Domains), r.Domains)
	}
	if r.ExitCode != r.Outcome.State.ExitCode() || r.Outcome.State != outcome.Tripped {
		t.Fatalf("outcome %s exit %d; want tripped with its own exit code", r.Outcome.State, r.ExitCode)
	}

	h, _ := domainOf(r, healthy.Host())
	if h.State != "closed" || h.Trips != 0 || h.Records != 30 || h.OK != int64(served(healthy, 200)) ||
		h.OK != 33 || h.Failures.Gone != 1 || h.Invalid != 0 || h.Refused != 0 || h.MedianLatency <= 0 {
		t.Errorf("healthy store line %+v: want closed, 33 ok (30 products, 3 listings), 30 records, the one 404 as gone", h)
	}

	d, _ := domainOf(r, degrading.Host())
	if d.State != "open" || d.Trips != 1 || d.Profile != "standard" || d.RetryAt.IsZero() {
		t.Errorf("degrading store line %+v: want open after one trip, with a retry time", d)
	}
	if d.OK != int64(degrading.CountMode(testserver.Healthy)) || d.Failures.Degraded != int64(degrading.CountMode(testserver.Degrade)) {
		t.Errorf("degrading store: ok %d degraded %d; the store served %d pages and %d 503s",
			d.OK, d.Failures.Degraded, degrading.CountMode(testserver.Healthy), degrading.CountMode(testserver.Degrade))
	}
	if want := len(filter(b.Unfinished().URLs, degrading.Host())); d.Unfinished != want || d.Refused == 0 || d.Unfinished == 0 {
		t.Errorf("degrading store: refused %d, unfinished %d (breaker lists %d); want both above 0 and unfinished as listed", d.Refused, d.Unfinished, want)
	}

	x, _ := domainOf(r, restyled.Host())
	if x.SelectorBroken == nil || !slices.Contains(x.SelectorBroken.Selectors, testserver.TitleSelector) ||
		x.SelectorBroken.Pages != validate.DefaultBrokenAfter || len(x.SelectorBroken.Evidence) != x.SelectorBroken.Pages {
		t.Fatalf("restyled store: diagnosis %+v, want selector_broken on %q with %d evidence pages",
			x.SelectorBroken, testserver.TitleSelector, validate.DefaultBrokenAfter)
	}
	if x.Invalid != int64(restyled.CountMode(testserver.Restyled)) || x.Invalid == 0 || x.Records != 0 || x.OK != 1 {
		t.Errorf("restyled store line %+v: want every product page fetched invalid, the listing ok, no records", x)
	}

	// The total adds the domains up.
	var ok, records, degraded int64
	for _, dm := range r.Domains {
		ok, records, degraded = ok+dm.OK, records+dm.Records, degraded+dm.Failures.Degraded
	}
	if r.Total.OK != ok || r.Total.Records != records || r.Total.Failures.Degraded != degraded || records != r.Outcome.Records {
		t.Errorf("total %+v does not add up: ok %d records %d degraded %d, outcome records %d", r.Total, ok, records, degraded, r.Outcome.Records)
	}
}

func filter(us []breaker.Unfinished, host string) []breaker.Unfinished {
	var out []breaker.Unfinished
	for _, u := range us {
		if u.Domain == host {
			out = append(out, u)
		}
	}
	return out
}

// served counts the requests a store answered with status.
func served(s *testserver.Store, status int) int {
	n := 0
	for _, h := range s.Requests() {
		if h.Status == status {
			n++
		}
	}
	return n
}

func TestReportJSONRoundTripsEveryField(t *testing.T) {
	fleet := startFleet(t,
		testserver.Config{Products: 10, PerPage: 10},
		testserver.Config{Products: 60, PerPage: 60, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 10}})
	r, _, _ := crawl(t, fleet)

	var buf bytes.Buffer
	if err := r.Write(&buf, report.JSON); err != nil {
		t.Fatal(err)
	}
	// outcome.State has no UnmarshalText (yet), so the outcome is read as
	// text; the domains decode into report.Domain.
	var back struct {
		Outcome struct {
			State   string   `json:"state"`
			Reason  string   `json:"reason"`
			Domains []string `json:"domains"`
			Records int64    `json:"records"`
		} `json:"outcome"`
		ExitCode int             `json:"exit_code"`
		Domains  []report.Domain `json:"domains"`
		Total    report.Domain   `json:"total"`
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("the JSON report does not decode: %v\n%s", err, buf.String())
	}
	// MedianLatency travels as median_latency_ms.
	for i := range r.Domains {
		r.Domains[i].MedianLatency = 0
	}
	r.Total.MedianLatency = 0
	if !reflect.DeepEqual(back.Domains, r.Domains) || !reflect.DeepEqual(back.Total, r.Total) {
		t.Fatalf("round trip changed the domains:\nwant %+v\ngot  %+v", r.Domains, back.Domains)
	}
	if back.ExitCode != 2 || back.Outcome.State != "tripped" || back.Outcome.Reason != r.Outcome.Reason ||
		back.Outcome.Records != r.Outcome.Records || !slices.Contains(back.Outcome.Domains, fleet.Stores[1].Host()) {
		t.Fatalf("decoded outcome %+v exit %d: want tripped (2) naming %s", back.Outcome, back.ExitCode, fleet.Stores[1].Host())
	}
	// Machines find every counter under a stable name, zero or not.
	var raw map[string]any
	json.Unmarshal(buf.Bytes(), &raw)
	dom := raw["domains"].([]any)[0].(map[string]any)
	for _, k := range []string{"domain", "state", "records", "ok", "invalid", "failures", "refused", "unfinished", "trips", "pauses", "median_latency_ms"} {
		if _, ok := dom[k]; !ok {
			t.Errorf("JSON domain has no %q: %v", k, dom)
		}
	}
	if dom["median_latency_ms"].(float64) <= 0 {
		t.Errorf("median_latency_ms %v, want the healthy store's measured median", dom["median_latency_ms"])
	}
}

func TestReportTextShowsRareColumnsOnlyWhenSomeDomainHasThem(t *testing.T) {
	fleet := startFleet(t,
		testserver.Config{Products: 10, PerPage: 10},
		testserver.Config{Products: 30, PerPage: 30, Scenario: testserver.Scenario{Mode: testserver.Restyled}})
	store := fleet.Stores[0]
	plain, _, _ := crawl(t, fleet)
	var buf bytes.Buffer
	if err := plain.Write(&buf, report.Text); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	head := lineStarting(text, "domain ")
	if head == "" || strings.Contains(head, "gone") || strings.Contains(head, "throttled") || strings.Contains(head, "pauses") {
		t.Fatalf("header %q: want the table header without empty rare columns\n%s", head, text)
	}
	for _, s := range fleet.Stores {
		if lineStarting(text, s.Host()+" ") == "" {
			t.Errorf("no row for %s:\n%s", s.Host(), text)
		}
	}
	if !strings.Contains(text, "selector_broken: "+fleet.Stores[1].Host()) || !strings.Contains(text, "evidence: "+fleet.Stores[1].URL()+"/products/") {
		t.Errorf("the restyled store's diagnosis and evidence are not in the text:\n%s", text)
	}
	if lineStarting(text, "total ") == "" || !strings.HasPrefix(text, "outcome: tripped (exit 2)") {
		t.Errorf("want the outcome first and a total row:\n%s", text)
	}

	store.Reset()
	fleet2 := startFleet(t, testserver.Config{Products: 5, PerPage: 5})
	withGone, _, _ := crawl(t, fleet2, fleet2.Stores[0].URL()+"/products/sku-404")
	buf.Reset()
	withGone.Write(&buf, report.Text)
	head = lineStarting(buf.String(), "domain ")
	if !strings.Contains(head, "gone") || strings.Contains(head, "throttled") {
		t.Fatalf("header %q: want a gone column for the 404, and no throttled column\n%s", head, buf.String())
	}
	row := strings.Fields(lineStarting(buf.String(), fleet2.Stores[0].Host()+" "))
	heads := strings.Fields(head)
	if i := slices.Index(heads, "gone"); i < 0 || i >= len(row) || row[i] != "1" {
		t.Fatalf("row %v under %v: want gone = 1", row, heads)
	}
}

func lineStarting(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestReportWithoutSourcesStillSaysHowTheRunEnded(t *testing.T) {
	r := report.New(outcome.Decide(0))
	var buf bytes.Buffer
	r.Write(&buf, report.Text)
	if r.ExitCode != 3 || len(r.Domains) != 0 || !strings.HasPrefix(buf.String(), "outcome: empty (exit 3)") {
		t.Fatalf("exit %d, domains %v, text:\n%s\nwant an empty run and no table", r.ExitCode, r.Domains, buf.String())
	}
	r = report.New(outcome.Decide(3), report.Sources{Records: map[string]int64{"Shop.Example:8080": 3}}, report.Sources{Breaker: nil})
	if d, ok := domainOf(r, "shop.example:8080"); !ok || d.Records != 3 || d.State != report.Untouched {
		t.Fatalf("records-only domain %+v (found %v): want the host normalised, 3 records, state untouched", d, ok)
	}
}

func TestReportShowsThePaceOfAThrottledDomain(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	store, err := testserver.Start(testserver.Config{Products: 10, Now: clk.Now,
		Scenario: testserver.Scenario{Mode: testserver.Throttle, After: 3, RetryAfter: 4 * time.Second, RecoverAfter: 6 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk, Pacing: breaker.Pacing{Parallelism: 2}})
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector()
	b.Register(c)
	stop := make(chan struct{})
	go clk.Drive(stop) // time passes only while everyone waits
	for i := 1; i <= 10; i++ {
		c.Visit(store.ProductURL(i))
	}
	close(stop)
	r := report.New(outcome.Decide(-1, b), report.Sources{Breaker: b})
	d, ok := domainOf(r, store.Host())
	if !ok || d.Pauses < 1 || d.PausedFor < 4*time.Second || d.PaceLimit != 1 || d.PaceGap <= 0 || d.Failures.Throttled < 1 {
		t.Fatalf("domain line %+v: want the pauses, the time paused and the slowed pace", d)
	}
	var buf bytes.Buffer
	if err := r.Write(&buf, report.Text); err != nil {
		t.Fatal(err)
	}
	// One thing per column: the in-flight cap and the gap, never "2 @ -".
	heads := strings.Fields(lineStarting(buf.String(), "domain "))
	row := strings.Fields(lineStarting(buf.String(), store.Host()+" "))
	cell := func(h string) string {
		if i := slices.Index(heads, h); i >= 0 && i < len(row) {
			return row[i]
		}
		return "?"
	}
	if cell("paused") == "-" || cell("inflight") != "1" || !regexp.MustCompile(`^[0-9.]+(ms|s)$`).MatchString(cell("gap")) || strings.Contains(buf.String(), "@") {
		t.Fatalf("row %v under %v: want paused, inflight 1 and a gap\n%s", row, heads, buf.String())
	}
}

// evidence is a Judge that reports fixed findings.
type evidence outcome.Evidence

func (e evidence) Judge() outcome.Evidence { return outcome.Evidence(e) }

// URLs dead of failures are named by domain and cause, with samples: in
// the table (a dead column), under it, and in the JSON findings.
func TestReportNamesDeadURLsByDomainAndCause(t *testing.T) {
	dead := outcome.Finding{State: outcome.Error, Kind: "dead", Reason: "4 URLs dead of failures", Domains: []string{"sick.example"},
		Dead: []outcome.Dead{
			{Domain: "sick.example", Cause: "degraded (HTTP 503)", URLs: 3, Samples: []string{"http://sick.example/list/3", "http://sick.example/products/sku-40"}},
			{Domain: "sick.example", Cause: "invalid", URLs: 1, Samples: []string{"http://sick.example/products/sku-41"}},
		}}
	o := outcome.Decide(5, evidence{Findings: []outcome.Finding{dead}})
	r := report.New(o, report.Sources{Records: map[string]int64{"sick.example": 5, "ok.example": 2}})
	if d, _ := domainOf(r, "sick.example"); d.Dead != 4 || r.Total.Dead != 4 {
		t.Errorf("dead: %d on the domain, %d in total; want 4 and 4", d.Dead, r.Total.Dead)
	}
	var buf bytes.Buffer
	if err := r.Write(&buf, report.Text); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	heads := strings.Fields(lineStarting(text, "domain "))
	row := strings.Fields(lineStarting(text, "sick.example "))
	if i := slices.Index(heads, "dead"); i < 0 || i >= len(row) || row[i] != "4" {
		t.Errorf("row %v under %v: want dead = 4\n%s", row, heads, text)
	}
	for _, want := range []string{"sick.example  degraded (HTTP 503)  3  http://sick.example/list/3 http://sick.example/products/sku-40", "sick.example  invalid              1  http://sick.example/products/sku-41"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text does not name %q:\n%s", want, text)
		}
	}
	buf.Reset()
	if err := r.Write(&buf, report.JSON); err != nil {
		t.Fatal(err)
	}
	var back report.Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Outcome.Findings) != 1 || !reflect.DeepEqual(back.Outcome.Findings[0].Dead, dead.Dead) {
		t.Errorf("JSON findings %+v: want the dead groups as given", back.Outcome.Findings)
	}
	// A report with no dead URL has no dead column.
	buf.Reset()
	report.New(outcome.Decide(2), report.Sources{Records: map[string]int64{"ok.example": 2}}).Write(&buf, report.Text)
	if strings.Contains(lineStarting(buf.String(), "domain "), "dead") {
		t.Errorf("a dead column with nothing dead:\n%s", buf.String())
	}
}

// The Usage's report (no Sources.Records) showed a records column of zeros
// under a records line of 32: the column is shown only when some domain
// has records, and then it sums to the line.
func TestReportRecordsColumnAgreesWithTheRecordsLine(t *testing.T) {
	fleet := startFleet(t, testserver.Config{Products: 20, PerPage: 10}, testserver.Config{Products: 12, PerPage: 10})
	r, b, v := crawl(t, fleet)
	header := func(r report.Report) string {
		var buf bytes.Buffer
		r.Write(&buf, report.Text)
		for _, l := range strings.Split(buf.String(), "\n") {
			if strings.HasPrefix(l, "domain ") {
				return l
			}
		}
		t.Fatalf("no domain table in:\n%s", buf.String())
		return ""
	}
	var sum int64
	for _, d := range r.Domains {
		sum += d.Records
	}
	if sum != r.Outcome.Records || r.Outcome.Records != 32 || !strings.Contains(header(r), " records ") {
		t.Fatalf("with Sources.Records: the domains sum to %d records, the line says %d (want 32), header %q", sum, r.Outcome.Records, header(r))
	}
	// The same run reported as the Usage does, without per-domain records.
	bare := report.New(outcome.Decide(r.Outcome.Records, b), report.Sources{Breaker: b, Validator: v})
	if h := header(bare); strings.Contains(h, " records ") {
		t.Fatalf("without Sources.Records the table still has a records column: %q", h)
	}
}
