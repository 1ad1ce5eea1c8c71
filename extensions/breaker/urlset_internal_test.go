package breaker

import (
	"strconv"
	"testing"
)

// A recentURLs set is bounded: it keeps the last recentURLsSize to
// 2×recentURLsSize URLs, forgets the oldest, and forgets a URL removed.
func TestRecentURLsAreBounded(t *testing.T) {
	var s recentURLs
	if s.Has("u0") {
		t.Fatal("an empty set has u0")
	}
	for i := range 2*recentURLsSize + 1 {
		s.Add("u" + strconv.Itoa(i))
	}
	if s.Has("u0") {
		t.Error("u0 still remembered after 2×recentURLsSize more URLs")
	}
	if last := "u" + strconv.Itoa(2*recentURLsSize); !s.Has(last) {
		t.Errorf("%s, the latest, forgotten", last)
	}
	if n := s.urls.Len(); n > 2*recentURLsSize {
		t.Errorf("%d URLs held, want at most %d", n, 2*recentURLsSize)
	}
	s.Remove("u" + strconv.Itoa(2*recentURLsSize))
	if s.Has("u" + strconv.Itoa(2*recentURLsSize)) {
		t.Error("a removed URL is still there")
	}
}
