package checkpoint

import "testing"

// What a dead URL died of, from its last error as this build writes it
// and as earlier builds did (no class first).
func TestDeathCauseReadsTheClassAndItsDetail(t *testing.T) {
	for _, tc := range []struct {
		lastError, cause string
		gone             bool
	}{
		{"degraded: HTTP 503: Service Unavailable", "degraded (HTTP 503)", false},
		{`degraded: Get "http://a.test/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, "degraded (timeout)", false},
		{"degraded: dial tcp 127.0.0.1:1: connect: connection refused", "degraded (refused)", false},
		{"degraded: unexpected EOF", "degraded (truncated)", false},
		{"degraded: something else", "degraded", false},
		{"invalid: HTTP 200: validate: missing selector h1", "invalid", false},
		{"blocked: HTTP 403: Forbidden", "blocked (HTTP 403)", false},
		{"client_error: HTTP 400", "client_error (HTTP 400)", false},
		{"gone: HTTP 404: Not Found", "gone", true},
		{"HTTP 410", "gone", true},
		{"HTTP 503: Service Unavailable", "failed (HTTP 503)", false},
		{"checkpoint: a queued request is not JSON colly can load: EOF", "request not loadable", false},
		{"", "failed", false},
	} {
		if cause, gone := deathCause(tc.lastError); cause != tc.cause || gone != tc.gone {
			t.Errorf("deathCause(%q) = %q, %v; want %q, %v", tc.lastError, cause, gone, tc.cause, tc.gone)
		}
	}
}
