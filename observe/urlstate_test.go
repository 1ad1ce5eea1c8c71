package observe_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/gocolly/colly/v2"
)

var stateNames = map[observe.URLState]string{observe.Done: "done", observe.Gone: "gone", observe.Failed: "failed",
	observe.ThrottledOut: "throttled out", observe.Resent: "resent", observe.Parked: "parked",
	observe.Cancelled: "cancelled", observe.Settled: "settled"}

func TestStateOf(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	open := &circuit.OpenError{Key: "shop.test", State: circuit.Open, RetryAt: at}
	visited := &colly.AlreadyVisitedError{Destination: &url.URL{Scheme: "http", Host: "shop.test", Path: "/a"}}
	unavailable := errors.New("Service Unavailable")
	attempt := func(c circuit.Class, status int, err error) observe.Attempt {
		return observe.Attempt{Result: circuit.Result{Class: c}, Status: status, Err: err}
	}
	with := func(a observe.Attempt, f func(*observe.Attempt)) observe.Attempt { f(&a); return a }
	retrying := func(a *observe.Attempt) { a.Retrying = true }
	gaveUp := func(a *observe.Attempt) { a.GaveUp = true }
	handedBack := func(a *observe.Attempt) { a.ResendAt = at }
	cancelled := func(a *observe.Attempt) { a.Cancelled = true }
	cases := []struct {
		name   string
		a      observe.Attempt
		want   observe.URLState
		reason string
		until  time.Time
	}{
		{"success", attempt(circuit.Success, 200, nil), observe.Done, "", time.Time{}},
		{"a success handed back", with(attempt(circuit.Success, 200, nil), handedBack), observe.Parked, "", at},
		{"a success retried", with(attempt(circuit.Success, 200, nil), retrying), observe.Resent, "", time.Time{}},
		{"retrying wins over the class", with(attempt(circuit.Degraded, 503, unavailable), retrying), observe.Resent, "degraded: HTTP 503: Service Unavailable", time.Time{}},
		{"success without a status", attempt(circuit.Success, 0, nil), observe.Done, "", time.Time{}},
		{"degraded 503", attempt(circuit.Degraded, 503, unavailable), observe.Failed, "degraded: HTTP 503: Service Unavailable", time.Time{}},
		{"degraded, no response", attempt(circuit.Degraded, 0, context.DeadlineExceeded), observe.Failed, "degraded: context deadline exceeded", time.Time{}},
		{"degraded, an error with no text", attempt(circuit.Degraded, 502, errors.New("")), observe.Failed, "degraded: HTTP 502", time.Time{}},
		{"invalid page", attempt(circuit.Invalid, 200, errors.New("page under 1024 bytes")), observe.Failed, "invalid: HTTP 200: page under 1024 bytes", time.Time{}},
		{"blocked", attempt(circuit.Blocked, 403, nil), observe.Failed, "blocked: HTTP 403", time.Time{}},
		{"client error", attempt(circuit.ClientError, 400, nil), observe.Failed, "client_error: HTTP 400", time.Time{}},
		{"an unknown class fails", attempt(circuit.Class(200), 500, nil), observe.Failed, "class(200): HTTP 500", time.Time{}},
		{"gone 404", attempt(circuit.Gone, 404, nil), observe.Gone, "gone: HTTP 404", time.Time{}},
		{"gone 410", attempt(circuit.Gone, 410, nil), observe.Gone, "gone: HTTP 410", time.Time{}},
		{"throttled, retried by the breaker", with(attempt(circuit.Throttled, 429, nil), retrying), observe.Resent, "throttled: HTTP 429", time.Time{}},
		{"throttled, no retry (no breaker)", attempt(circuit.Throttled, 429, nil), observe.ThrottledOut, "throttled: HTTP 429", time.Time{}},
		{"throttled, gave up", with(attempt(circuit.Throttled, 429, nil), gaveUp), observe.ThrottledOut, "throttled: HTTP 429", time.Time{}},
		{"throttled, retrying and gave up", with(with(attempt(circuit.Throttled, 429, nil), retrying), gaveUp), observe.ThrottledOut, "throttled: HTTP 429", time.Time{}},
		{"throttled, handed back", with(attempt(circuit.Throttled, 503, unavailable), handedBack), observe.Parked, "throttled: HTTP 503: Service Unavailable", at},
		{"handed back wins over retrying", with(with(attempt(circuit.Throttled, 429, nil), handedBack), retrying), observe.Parked, "throttled: HTTP 429", at},
		{"refused (excluded, open circuit)", attempt(circuit.Excluded, 0, open), observe.Parked, "excluded: " + open.Error(), at},
		{"refused, wrapped", attempt(circuit.Excluded, 0, fmt.Errorf("hop: %w", open)), observe.Parked, "excluded: hop: " + open.Error(), at},
		{"redirect to a visited page", attempt(circuit.Excluded, 302, visited), observe.Settled, "excluded: HTTP 302: " + visited.Error(), time.Time{}},
		{"aborted after headers", attempt(circuit.Excluded, 200, colly.ErrAbortedAfterHeaders), observe.Settled, "excluded: HTTP 200: " + colly.ErrAbortedAfterHeaders.Error(), time.Time{}},
		{"cancelled by the crawl", with(attempt(circuit.Excluded, 0, context.Canceled), cancelled), observe.Cancelled, "excluded: context canceled", time.Time{}},
		{"excluded, another error", attempt(circuit.Excluded, 0, errors.New("cut")), observe.Cancelled, "excluded: cut", time.Time{}},
		{"excluded, no error", attempt(circuit.Excluded, 0, nil), observe.Cancelled, "excluded: ", time.Time{}},
		{"excluded, retrying (a redirect's hop re-sent)", with(attempt(circuit.Excluded, 0, context.Canceled), retrying), observe.Resent, "excluded: context canceled", time.Time{}},
		{"excluded, the hop's re-send not issued", with(attempt(circuit.Excluded, 0, context.Canceled), gaveUp), observe.Cancelled, "excluded: context canceled", time.Time{}},
		{"excluded, refused and gave up", with(attempt(circuit.Excluded, 0, open), gaveUp), observe.Parked, "excluded: " + open.Error(), at},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, reason, until := observe.StateOf(tc.a)
			if s != tc.want || reason != tc.reason || !until.Equal(tc.until) {
				t.Errorf("StateOf = %s, %q, %v; want %s, %q, %v", stateNames[s], reason, until, stateNames[tc.want], tc.reason, tc.until)
			}
		})
	}
}
