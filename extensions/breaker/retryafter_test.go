package breaker_test

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 120 * time.Second, true},
		{" 5 ", 5 * time.Second, true},
		{"0", 0, true},
		{now.Add(90 * time.Second).Format(time.RFC1123), 90 * time.Second, true},
		{"Sun, 29 Nov 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sunday, 29-Nov-26 12:00:30 GMT", 30 * time.Second, true}, // RFC 850, still valid to parse
		{"Sun, 29 Nov 2026 11:00:00 GMT", 0, false},                // in the past
		{"-5", 0, false},
		{"soon", 0, false},
		{"1.5", 0, false},
		{"", 0, false},
		{"99999999999999999999", 0, false},
		{"9999999999", 365 * 24 * time.Hour, true}, // absurd but a number: capped, no overflow
	}
	for _, tt := range tests {
		got, ok := breaker.ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
