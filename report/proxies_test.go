package report_test

import (
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
)

// A failure no proxy was blamed for is the site's: the proxy line must not
// read as if the site's degraded column had not counted it.
func TestTheProxyLineSaysWhoseItsUnblamedFailuresAre(t *testing.T) {
	r := report.New(outcome.Outcome{State: outcome.Complete}, report.Sources{})
	r.Proxies = []proxy.Snapshot{
		{Name: "127.0.0.1:3128", State: circuit.Closed, Sent: 109, Outcomes: map[string]int64{"carried": 100, "not_judged": 9}},
		{Name: "127.0.0.1:3129", State: circuit.Closed, Sent: 100, Outcomes: map[string]int64{"carried": 100}},
	}
	var text strings.Builder
	if err := r.Write(&text, report.Text); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if !strings.Contains(out, "not_judged 9") {
		t.Fatalf("the proxy line lost its count:\n%s", out)
	}
	if !strings.Contains(out, "not_judged: no proxy was blamed; a failure among them counts against its site") {
		t.Errorf("the report does not say whose the unblamed failures are:\n%s", out)
	}
	r.Proxies = r.Proxies[1:]
	text.Reset()
	if err := r.Write(&text, report.Text); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "not_judged:") {
		t.Errorf("the note is printed with no unblamed attempt:\n%s", text.String())
	}
}
