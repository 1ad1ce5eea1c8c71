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

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/gocolly/colly/v2"
)

func TestClassifyFollowsTheOutcomeTable(t *testing.T) {
	urlErr := func(err error) error { return &url.Error{Op: "Get", URL: "http://x.test/", Err: err} }
	tests := []struct {
		name   string
		status int
		err    error
		want   breaker.Class
	}{
		{"200", 200, nil, breaker.Success},
		{"204 routed to OnError by colly v2.3.0", 204, errors.New("No Content"), breaker.Success},
		{"503", 503, errors.New("Service Unavailable"), breaker.Degraded},
		{"502", 502, errors.New("Bad Gateway"), breaker.Degraded},
		{"500", 500, errors.New("Internal Server Error"), breaker.Degraded},
		{"408", 408, errors.New("Request Timeout"), breaker.Degraded},
		{"429", 429, errors.New("Too Many Requests"), breaker.Throttled},
		{"403", 403, errors.New("Forbidden"), breaker.Blocked},
		{"401", 401, errors.New("Unauthorized"), breaker.Blocked},
		{"404", 404, errors.New("Not Found"), breaker.Gone},
		{"410", 410, errors.New("Gone"), breaker.Gone},
		{"400", 400, errors.New("Bad Request"), breaker.ClientError},
		{"timeout", 0, urlErr(context.DeadlineExceeded), breaker.Degraded},
		{"refused", 0, urlErr(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), breaker.Degraded},
		{"reset", 0, urlErr(syscall.ECONNRESET), breaker.Degraded},
		{"truncated body", 0, io.ErrUnexpectedEOF, breaker.Degraded},
		{"dns", 0, urlErr(&net.DNSError{Err: "no such host", Name: "x.test", IsNotFound: true}), breaker.Degraded},
		{"cancelled", 0, urlErr(context.Canceled), breaker.Excluded},
		{"aborted before request", 0, colly.ErrAbortedBeforeRequest, breaker.Excluded},
		{"aborted after headers", 0, colly.ErrAbortedAfterHeaders, breaker.Excluded},
		{"redirect to visited", 0, urlErr(&colly.AlreadyVisitedError{Destination: &url.URL{Host: "x.test"}}), breaker.Excluded},
		{"our own refusal", 0, fmt.Errorf("wrapped: %w", &breaker.CircuitOpenError{Key: "x.test"}), breaker.Excluded},
	}
	for _, tt := range tests {
		if got := breaker.Classify(tt.status, tt.err); got != tt.want {
			t.Errorf("%s: Classify(%d, %v) = %s, want %s", tt.name, tt.status, tt.err, got, tt.want)
		}
	}
	if !breaker.IsDNSError(urlErr(&net.DNSError{Err: "no such host"})) || breaker.IsDNSError(io.EOF) {
		t.Error("IsDNSError does not tell DNS failures apart")
	}
	for c, want := range map[breaker.Class][2]bool{
		breaker.Success: {false, true}, breaker.Degraded: {true, true}, breaker.Invalid: {true, true},
		breaker.Throttled: {false, false}, breaker.Blocked: {false, false}, breaker.Gone: {false, false},
	} {
		if c.Failure() != want[0] || c.Counted() != want[1] {
			t.Errorf("%s: Failure %v Counted %v, want %v %v", c, c.Failure(), c.Counted(), want[0], want[1])
		}
	}
}
