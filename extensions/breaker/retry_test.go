package breaker_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

func TestRetryOnErrorRetriesOnlyDegradedAttempts(t *testing.T) {
	resp := func(status int, h http.Header) *colly.Response {
		return &colly.Response{StatusCode: status, Headers: &h}
	}
	open := &circuit.OpenError{Key: "shop.test"}
	for _, tc := range []struct {
		name string
		r    *colly.Response
		err  error
		want bool
	}{
		{"503", resp(503, nil), errors.New("Service Unavailable"), true},
		{"500", resp(500, nil), errors.New("Internal Server Error"), true},
		{"connection refused", resp(0, nil), errors.New("dial tcp: connection refused"), true},
		{"refused by the breaker", resp(0, nil), open, false},
		{"429", resp(429, http.Header{"Retry-After": {"2"}}), errors.New("Too Many Requests"), false},
		{"503 with Retry-After", resp(503, http.Header{"Retry-After": {"2"}}), errors.New("Service Unavailable"), false},
		{"404", resp(404, nil), errors.New("Not Found"), false},
		{"403", resp(403, nil), errors.New("Forbidden"), false},
		{"400", resp(400, nil), errors.New("Bad Request"), false},
		{"aborted", resp(0, nil), colly.ErrAbortedBeforeRequest, false},
	} {
		if got := breaker.RetriesOnError(tc.r, tc.err); got != tc.want {
			t.Errorf("%s: retried %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRetryOnErrorLeavesGoneAndRefusedAlone: the helper retries 503s up to
// its limit, and neither 404s nor refused requests.
func TestRetryOnErrorLeavesGoneAndRefusedAlone(t *testing.T) {
	gone := startStore(t, testserver.Config{Products: 5, Scenario: testserver.Scenario{Mode: testserver.Gone}})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
	c := colly.NewCollector()
	c.OnError(breaker.RetryOnError(3))
	b.Register(c)
	for _, u := range productURLs(gone, 5) {
		c.Visit(u)
	}
	if got := gone.Count(); got != 5 {
		t.Errorf("a store answering 404 received %d requests for 5 URLs: 404s were retried", got)
	}

	bad := startStore(t, testserver.Config{Products: 30, Scenario: testserver.Scenario{Mode: testserver.Degrade}})
	for _, u := range productURLs(bad, 30) {
		c.Visit(u)
	}
	need := breaker.FailuresToTrip(breaker.Standard())
	if got := bad.Count(); got != need {
		t.Errorf("a failing store received %d requests, want %d: each retry is a failure, then every URL is refused and none retried", got, need)
	}
}
