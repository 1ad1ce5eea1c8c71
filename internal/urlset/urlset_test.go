package urlset

import (
	"strconv"
	"testing"
)

// A Recent set is bounded: it keeps the last RecentSize to 2×RecentSize URLs,
// forgets the oldest, and forgets a URL removed.
func TestRecentIsBounded(t *testing.T) {
	var s Recent
	if s.Has("u0") {
		t.Fatal("an empty set has u0")
	}
	for i := range 2*RecentSize + 1 {
		s.Add("u" + strconv.Itoa(i))
	}
	if s.Has("u0") {
		t.Error("u0 still remembered after 2×RecentSize more URLs")
	}
	if last := "u" + strconv.Itoa(2*RecentSize); !s.Has(last) {
		t.Errorf("%s, the latest, forgotten", last)
	}
	if n := s.urls.Len(); n > 2*RecentSize {
		t.Errorf("%d URLs held, want at most %d", n, 2*RecentSize)
	}
	s.Remove("u" + strconv.Itoa(2*RecentSize))
	if s.Has("u" + strconv.Itoa(2*RecentSize)) {
		t.Error("a removed URL is still there")
	}
}
