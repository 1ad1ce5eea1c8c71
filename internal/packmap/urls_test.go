package packmap

import (
	"strconv"
	"testing"
)

// A RecentURLs set is bounded: it keeps the last RecentURLsSize to
// 2×RecentURLsSize URLs, forgets the oldest, and forgets a URL removed.
func TestRecentURLsAreBounded(t *testing.T) {
	var s RecentURLs
	if s.Has("u0") {
		t.Fatal("an empty set has u0")
	}
	for i := range 2*RecentURLsSize + 1 {
		s.Add("u" + strconv.Itoa(i))
	}
	if s.Has("u0") {
		t.Error("u0 still remembered after 2×RecentURLsSize more URLs")
	}
	if last := "u" + strconv.Itoa(2*RecentURLsSize); !s.Has(last) {
		t.Errorf("%s, the latest, forgotten", last)
	}
	if n := s.urls.Len(); n > 2*RecentURLsSize {
		t.Errorf("%d URLs held, want at most %d", n, 2*RecentURLsSize)
	}
	s.Remove("u" + strconv.Itoa(2*RecentURLsSize))
	if s.Has("u" + strconv.Itoa(2*RecentURLsSize)) {
		t.Error("a removed URL is still there")
	}
}
