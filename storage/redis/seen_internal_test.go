package redis

import "testing"

// The ring counts the failures among the latest size outcomes: an old
// failure pushed out is no longer counted, and a reset forgets them all.
func TestSeenFailuresCountsTheLatestOutcomes(t *testing.T) {
	w := newSeenFailures(3)
	for i, c := range []struct {
		failed bool
		want   int
	}{{true, 1}, {true, 2}, {false, 2}, {false, 1}, {true, 1}, {true, 2}, {true, 3}} {
		if w.add(c.failed); w.failures() != c.want {
			t.Fatalf("after outcome %d: %d failures, want %d", i, w.failures(), c.want)
		}
	}
	w.reset()
	if w.failures() != 0 {
		t.Fatalf("%d failures after a reset", w.failures())
	}
	w.add(false) // over a failure held before the reset: not uncounted
	w.add(true)
	if w.failures() != 1 {
		t.Fatalf("%d failures after a reset and one failure, want 1", w.failures())
	}
}
