package breaker

import (
	"strconv"
	"testing"
)

// The gone set is bounded: it keeps the last goneCap to 2×goneCap URLs,
// forgets the oldest, and forgets a URL whose later answer was not gone.
func TestGoneSetIsBounded(t *testing.T) {
	var s goneSet
	if s.has("u0") {
		t.Fatal("an empty set has u0")
	}
	for i := range 2*goneCap + 1 {
		s.add("u" + strconv.Itoa(i))
	}
	if s.has("u0") {
		t.Error("u0 still remembered after 2×goneCap more URLs")
	}
	if last := "u" + strconv.Itoa(2*goneCap); !s.has(last) {
		t.Errorf("%s, the latest, forgotten", last)
	}
	if n := s.urls.Len(); n > 2*goneCap {
		t.Errorf("%d URLs held, want at most %d", n, 2*goneCap)
	}
	s.remove("u" + strconv.Itoa(2*goneCap))
	if s.has("u" + strconv.Itoa(2*goneCap)) {
		t.Error("a removed URL is still gone")
	}
}
