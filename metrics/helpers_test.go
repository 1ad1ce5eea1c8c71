package metrics_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func startStore(t *testing.T, cfg testserver.Config) *testserver.Store {
	t.Helper()
	s, err := testserver.Start(cfg)
	if err != nil {
		t.Fatalf("start test store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// serve starts the metrics endpoint on a free loopback port for the test.
func serve(t *testing.T, reg *prometheus.Registry) *metrics.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := metrics.Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := srv.Close(); err != nil {
			t.Errorf("server stopped with %v", err)
		}
	})
	return srv
}

// scraped is one scrape of /metrics, parsed from the text format.
type scraped map[string]*dto.MetricFamily

// scrape GETs url over HTTP, as Prometheus does, and parses the answer.
func scrape(t *testing.T, url string) scraped {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: status %d", url, resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("scrape %s: Content-Type %q, want the text format", url, ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	return scraped(fams)
}

// find returns the series of name whose labels include want.
func (s scraped) find(name string, want map[string]string) []*dto.Metric {
	fam, ok := s[name]
	if !ok {
		return nil
	}
	var out []*dto.Metric
	for _, m := range fam.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if have[k] != v {
				match = false
			}
		}
		if match {
			out = append(out, m)
		}
	}
	return out
}

// value returns the one sample of name with labels, failing the test if
// there is not exactly one.
func (s scraped) value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	ms := s.find(name, want)
	if len(ms) != 1 {
		t.Fatalf("%s%v: %d series, want 1 (families: %s)", name, want, len(ms), s.names())
	}
	m := ms[0]
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	t.Fatalf("%s%v: no value", name, want)
	return 0
}

func (s scraped) names() string {
	var n []string
	for k := range s {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, " ")
}

func newBreaker(t *testing.T, c breaker.Config) *breaker.Breaker {
	t.Helper()
	b, err := breaker.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
