package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/gocolly/colly/v2"
)

func TestClassifyFollowsTheOutcomeTable(t *testing.T) {
	urlErr := func(err error) error { return &url.Error{Op: "Get", URL: "http://x.test/", Err: err} }
	tests := []struct {
		name   string
		status int
		err    error
		want   circuit.Class
	}{
		{"200", 200, nil, circuit.Success},
		{"204 routed to OnError by colly v2.3.0", 204, errors.New("No Content"), circuit.Success},
		{"503", 503, errors.New("Service Unavailable"), circuit.Degraded},
		{"502", 502, errors.New("Bad Gateway"), circuit.Degraded},
		{"500", 500, errors.New("Internal Server Error"), circuit.Degraded},
		{"408", 408, errors.New("Request Timeout"), circuit.Degraded},
		{"429", 429, errors.New("Too Many Requests"), circuit.Throttled},
		{"403", 403, errors.New("Forbidden"), circuit.Blocked},
		{"401", 401, errors.New("Unauthorized"), circuit.Blocked},
		{"404", 404, errors.New("Not Found"), circuit.Gone},
		{"410", 410, errors.New("Gone"), circuit.Gone},
		{"400", 400, errors.New("Bad Request"), circuit.ClientError},
		{"timeout", 0, urlErr(context.DeadlineExceeded), circuit.Degraded},
		{"refused", 0, urlErr(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), circuit.Degraded},
		{"reset", 0, urlErr(syscall.ECONNRESET), circuit.Degraded},
		{"truncated body", 0, io.ErrUnexpectedEOF, circuit.Degraded},
		{"dns", 0, urlErr(&net.DNSError{Err: "no such host", Name: "x.test", IsNotFound: true}), circuit.Degraded},
		{"cancelled", 0, urlErr(context.Canceled), circuit.Excluded},
		{"aborted before request", 0, colly.ErrAbortedBeforeRequest, circuit.Excluded},
		{"aborted after headers", 0, colly.ErrAbortedAfterHeaders, circuit.Excluded},
		{"redirect to visited", 0, urlErr(&colly.AlreadyVisitedError{Destination: &url.URL{Host: "x.test"}}), circuit.Excluded},
		{"our own refusal", 0, fmt.Errorf("wrapped: %w", &circuit.OpenError{Key: "x.test"}), circuit.Excluded},
	}
	for _, tt := range tests {
		if got := breaker.Classify(tt.status, tt.err); got != tt.want {
			t.Errorf("%s: Classify(%d, %v) = %s, want %s", tt.name, tt.status, tt.err, got, tt.want)
		}
	}
	if !breaker.IsDNSError(urlErr(&net.DNSError{Err: "no such host"})) || breaker.IsDNSError(io.EOF) {
		t.Error("IsDNSError does not tell DNS failures apart")
	}
	for c, want := range map[circuit.Class][2]bool{
		circuit.Success: {false, true}, circuit.Degraded: {true, true}, circuit.Invalid: {true, true},
		circuit.Throttled: {false, false}, circuit.Blocked: {false, false}, circuit.Gone: {false, false},
	} {
		if c.Failure() != want[0] || c.Counted() != want[1] {
			t.Errorf("%s: Failure %v Counted %v, want %v %v", c, c.Failure(), c.Counted(), want[0], want[1])
		}
	}
}
