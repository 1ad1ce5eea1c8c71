package breaker

import (
	"errors"
	"sync"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/gocolly/colly/v2"
)

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
