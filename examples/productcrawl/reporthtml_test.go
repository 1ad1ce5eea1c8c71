package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "rewrite docs/img/report.png from the browser test's run")

// screenshotPath is the README's picture of the demo's HTML report.
const screenshotPath = "../../docs/img/report.png"

// chromium finds the browser: Debian's chromium, or another Chrome. It
// skips the test without one, unless CI=true.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH, and CI=true: install it (apt-get install -y chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install -y chromium); under CI=true this fails")
	return ""
}

// drawnTimeline is what the page shows of one timeline, measured by the
// browser: where the plot's time axis lies on the screen, and the open
// bands.
type drawnTimeline struct {
	Domain string  `json:"domain"`
	T0     float64 `json:"t0"`    // Unix ms at the plot's start
	T1     float64 `json:"t1"`    // and at its end
	Left   float64 `json:"left"`  // screen x of the plot's start
	Width  float64 `json:"width"` // screen width of the plot
	Slice  float64 `json:"slice"` // screen width of one slice
	Open   []struct {
		Left, Right float64
	} `json:"open"`
}

// measure reads every timeline's geometry as laid out by the browser.
const measure = `Array.from(document.querySelectorAll("svg.timeline")).map(svg => {
	const box = svg.getBoundingClientRect(), scale = box.width / svg.viewBox.baseVal.width;
	const n = k => parseFloat(svg.dataset[k]);
	return {
		domain: svg.dataset.domain, t0: n("t0"), t1: n("t1"),
		left: box.left + n("x0") * scale, width: n("w") * scale,
		slice: n("w") * scale * n("sliceMs") / (n("t1") - n("t0")),
		open: Array.from(svg.querySelectorAll("rect.band.open")).map(r => {
			const b = r.getBoundingClientRect();
			return {Left: b.left, Right: b.right};
		}),
	};
})`

// The demo's HTML report in a real browser: a timeline per store, the
// open band of each tripped store where its breaker_transition put it,
// nothing on the console, no request but the file itself.
func TestReportHTMLShowsEachTripWhereItHappened(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	exe := chromium(t)
	r := runCrawl(t, "-report", "html", "-report-file", "report.html", "-status", "off", "-log-format", "json")
	if r.code != 2 {
		t.Fatalf("the demo exited %d, want 2 (tripped)\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "\ncolumns:\n") {
		t.Errorf("stdout has no text table:\n%s", r.stdout)
	}
	// When each store tripped, by its breaker_transition event.
	trips := map[string]time.Time{}
	for _, line := range strings.Split(r.stderr, "\n") {
		var ev struct {
			Event, Domain, To string
			Time              time.Time
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "breaker_transition" && ev.To == "open" {
			if _, seen := trips[ev.Domain]; !seen {
				trips[ev.Domain] = ev.Time
			}
		}
	}
	if len(trips) != 2 {
		t.Fatalf("%d stores tripped, want the demo's 2:\n%s", len(trips), r.stderr)
	}
	page := filepath.Join(r.dir, "report.html")
	if _, err := os.Stat(page); err != nil {
		t.Fatalf("no report.html: %v", err)
	}

	ctx, cancel := chromedp.NewContext(context.Background(), chromedp.WithAllocatorOptions(
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.WindowSize(1100, 800)))
	defer cancel()
	var mu sync.Mutex
	var problems, requests []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				problems = append(problems, "console "+string(ev.Type))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				problems = append(problems, string(ev.Entry.Level)+": "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		}
	}); err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	if err := chromedp.Do(run, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	drawn, err := chromedp.Run(run, chromedp.Evaluate[[]drawnTimeline](measure))
	if err != nil {
		t.Fatalf("measuring the timelines: %v", err)
	}
	shot, err := chromedp.Run(run, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}

	if len(drawn) != 3 {
		t.Fatalf("%d timelines, want one per demo store (3): %+v", len(drawn), drawn)
	}
	for _, tl := range drawn {
		at, tripped := trips[tl.Domain]
		if !tripped {
			if len(tl.Open) != 0 {
				t.Errorf("%s never tripped, but has an open band %+v", tl.Domain, tl.Open)
			}
			continue
		}
		if len(tl.Open) != 1 {
			t.Errorf("%s tripped once, has %d open bands", tl.Domain, len(tl.Open))
			continue
		}
		// The band starts in the slice of the trip: at most a slice
		// before it, and the log's millisecond after the transition.
		want := tl.Left + tl.Width*(float64(at.UnixMicro())/1000-tl.T0)/(tl.T1-tl.T0)
		if got := tl.Open[0].Left; got < want-tl.Slice-2 || got > want+2 {
			t.Errorf("%s: the open band starts at x=%.1f px; its trip at %s is at x=%.1f px (a slice is %.1f px)",
				tl.Domain, got, at.Format("15:04:05.000"), want, tl.Slice)
		}
		// Open until the run's end: the demo's cooldown outlasts it.
		if end := tl.Left + tl.Width; tl.Open[0].Right < end-1 {
			t.Errorf("%s: the open band ends at x=%.1f px before the run's end at %.1f px", tl.Domain, tl.Open[0].Right, end)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the console has errors or warnings: %q", problems)
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page asked for %s: it must need nothing but itself", u)
		}
	}

	if *updateScreenshot {
		if err := os.MkdirAll(filepath.Dir(screenshotPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(screenshotPath, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", screenshotPath, len(shot))
	}
}

// -report-file takes any report off stdout; -report html writes
// report.html by default with the text table on stdout; an unknown format
// is a usage error that names html.
func TestReportFileTakesTheReportOffStdout(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 6, PerPage: 5})
	r := runCrawl(t, "-report", "json", "-report-file", "out.json", "-status", "off", "-log-level", "warn", store.URL()+"/")
	if r.code != 0 || strings.Contains(r.stdout, "schema_version") {
		t.Fatalf("exit %d, stdout:\n%s\nwant 0 and no report on stdout", r.code, r.stdout)
	}
	body, err := os.ReadFile(filepath.Join(r.dir, "out.json"))
	if err != nil || !strings.Contains(string(body), `"schema_version": 2`) {
		t.Errorf("out.json: %v\n%s", err, body)
	}

	r = runCrawl(t, "-report", "html", "-status", "off", "-log-level", "warn", store.URL()+"/")
	page, err := os.ReadFile(filepath.Join(r.dir, "report.html"))
	if r.code != 0 || err != nil || !strings.Contains(r.stdout, "\ncolumns:\n") {
		t.Fatalf("exit %d, report.html: %v; stdout:\n%s", r.code, err, r.stdout)
	}
	if !strings.Contains(string(page), `data-domain="`+store.Host()+`"`) {
		t.Errorf("report.html has no timeline of %s", store.Host())
	}

	r = runCrawl(t, "-report", "pdf", store.URL()+"/")
	if r.code != 64 || !strings.Contains(r.stderr, "want text, json or html") {
		t.Errorf("-report pdf: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
