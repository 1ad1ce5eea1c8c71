package pace

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter reads a Retry-After header value, delay-seconds or an
// HTTP-date (RFC 9110 §10.2.3): how long to wait from now, and whether the
// value was usable (not garbage, negative or in the past).
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		const maxSecs = int64(365 * 24 * 3600) // no overflow on absurd values
		return time.Duration(min(secs, maxSecs)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		// Lenient: servers do send RFC 1123 with a zone other than GMT.
		if t, err = time.Parse(time.RFC1123, v); err != nil {
			if t, err = time.Parse(time.RFC1123Z, v); err != nil {
				return 0, false
			}
		}
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0, false
	}
	return d, true
}
