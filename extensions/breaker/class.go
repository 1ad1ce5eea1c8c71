package breaker

import (
	"context"
	"errors"
	"net"
	"sync"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/gocolly/colly/v2"
)

// Classify maps what came back from one attempt to its class: the HTTP
// status (0 when no response arrived) and the error Colly reported (nil on
// success). A 2xx is Success here; validation, which can turn it Invalid,
// is the caller's business.
func Classify(status int, err error) circuit.Class {
	if err != nil && status == 0 {
		return classifyError(err)
	}
	switch {
	case status >= 200 && status < 300:
		return circuit.Success
	case status == 429:
		return circuit.Throttled
	case status == 401 || status == 403:
		return circuit.Blocked
	case status == 404 || status == 410:
		return circuit.Gone
	case status == 408 || status >= 500:
		return circuit.Degraded
	case status >= 400:
		return circuit.ClientError
	case status >= 300:
		// A redirect Colly did not follow: the site answered.
		return circuit.Success
	}
	if err != nil {
		return classifyError(err)
	}
	return circuit.Success
}

func classifyError(err error) circuit.Class {
	var visited *colly.AlreadyVisitedError
	switch {
	case errors.Is(err, context.Canceled),
		errors.Is(err, colly.ErrAbortedBeforeRequest),
		errors.Is(err, colly.ErrAbortedAfterHeaders),
		errors.As(err, &visited),
		errors.Is(err, ErrOpen):
		return circuit.Excluded
	}
	// Everything else that stopped a response from arriving whole is the
	// origin's trouble: timeouts, resets, refusals, truncated bodies, DNS.
	return circuit.Degraded
}

// isDNSError reports whether err is a name-resolution failure. DNS failures
// count as Degraded, but the resolver may be ours: logs say so.
func isDNSError(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// shouldRetry says whether RetryOnError sends r's request again.
func shouldRetry(r *colly.Response, err error) bool {
	if errors.Is(err, ErrOpen) {
		return false
	}
	status := 0
	if r != nil {
		status = r.StatusCode
		if status == 503 && retryAfterIn(r.Headers) != "" {
			return false
		}
	}
	return Classify(status, err) == circuit.Degraded
}

// RetryOnError returns an OnError callback that sends a request again, up
// to max times a URL, and only when the attempt was Degraded (a 5xx, a
// timeout, a refused or reset connection): the usual retry loop, made
// safe to run beside the breaker. It never sends again a refusal
// (errors.Is(err, ErrOpen): the domain's circuit is open, and the
// checkpoint or Unfinished keeps the URL for later), a throttle (429, or
// 503 with Retry-After: the breaker sends it again itself after the
// pause), a 404/410/403 or other 4xx (the same answer would come back), or
// the crawl's own end. Register it on the collector with
// c.OnError(breaker.RetryOnError(3)).
func RetryOnError(max int) func(*colly.Response, error) {
	var mu sync.Mutex
	tries := map[string]int{}
	return func(r *colly.Response, err error) {
		if r == nil || r.Request == nil || !shouldRetry(r, err) {
			return
		}
		u := r.Request.URL.String()
		mu.Lock()
		n := tries[u]
		if n < max {
			tries[u] = n + 1
		}
		mu.Unlock()
		if n < max {
			r.Request.Retry()
		}
	}
}
