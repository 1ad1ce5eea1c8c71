package testserver

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
)

// startProxy starts a proxy for the test and closes it at the end.
func startProxy(t *testing.T, cfg ProxyConfig) *Proxy {
	t.Helper()
	p, err := StartProxy(cfg)
	if err != nil {
		t.Fatalf("StartProxy: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// viaProxy is a net/http client that sends every request through the
// proxy at proxyURL on a fresh connection; its timeout only bounds a broken
// test.
func viaProxy(t *testing.T, proxyURL string) *http.Client {
	t.Helper()
	pu, err := url.Parse(proxyURL)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}}
}

// getVia fetches u through the client and returns the status and the whole
// body, or the error.
func getVia(ctx context.Context, c *http.Client, u string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// collyOutcome is what a collector saw: statuses of the answers it got
// (OnResponse and OnError alike), and the errors of requests that got no
// answer.
type collyOutcome struct {
	statuses map[int]int
	errs     []error
}

// collector is a synchronous colly collector that records its outcome,
// revisits allowed so that a test decides what is fetched.
func collector(out *collyOutcome) *colly.Collector {
	*out = collyOutcome{statuses: map[int]int{}}
	c := colly.NewCollector(colly.AllowURLRevisit())
	c.SetRequestTimeout(10 * time.Second) // bounds a broken test only
	c.OnResponse(func(r *colly.Response) { out.statuses[r.StatusCode]++ })
	c.OnError(func(r *colly.Response, err error) {
		if r.StatusCode == 0 {
			out.errs = append(out.errs, err)
			return
		}
		out.statuses[r.StatusCode]++
	})
	return c
}
