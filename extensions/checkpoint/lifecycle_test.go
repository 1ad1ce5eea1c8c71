package checkpoint_test

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/storage"
)

func TestTransitionIsTheLifecycleTable(t *testing.T) {
	const max = 3
	retryAt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(st storage.State, attempts int) storage.Record {
		return storage.Record{ID: 1, URL: "http://h/p", State: st, Attempts: attempts}
	}
	for _, tc := range []struct {
		name     string
		from     storage.Record
		ev       checkpoint.Event
		state    storage.State
		attempts int
		lastErr  string
		notBef   time.Time
	}{
		{"discovered", storage.Record{ID: 1}, checkpoint.Queued, storage.Pending, 0, "", time.Time{}},
		{"re-driven after a failure", rec(storage.Failed, 1), checkpoint.Queued, storage.Pending, 1, "", time.Time{}},
		{"leaves", rec(storage.Pending, 0), checkpoint.Left, storage.InFlight, 1, "", time.Time{}},
		{"leaves again", rec(storage.Pending, 2), checkpoint.Left, storage.InFlight, 3, "", time.Time{}},
		{"success", rec(storage.InFlight, 1), checkpoint.Succeeded, storage.Done, 1, "", time.Time{}},
		{"degraded, attempts left", rec(storage.InFlight, 1), checkpoint.FailedAttempt, storage.Failed, 1, "boom", time.Time{}},
		{"degraded, last attempt", rec(storage.InFlight, max), checkpoint.FailedAttempt, storage.Dead, max, "boom", time.Time{}},
		{"gone at the first attempt", rec(storage.InFlight, 1), checkpoint.Gone, storage.Dead, 1, "boom", time.Time{}},
		{"throttled: attempt given back", rec(storage.InFlight, 2), checkpoint.Throttled, storage.Pending, 1, "boom", time.Time{}},
		{"throttled past the budget", rec(storage.InFlight, 1), checkpoint.ThrottledGaveUp, storage.Failed, 0, "boom", time.Time{}},
		{"refused before leaving", rec(storage.Pending, 1), checkpoint.Refused, storage.Parked, 1, "boom", retryAt},
		{"refused at a redirect hop", rec(storage.InFlight, 1), checkpoint.Refused, storage.Parked, 0, "boom", retryAt},
		{"cancelled in flight", rec(storage.InFlight, 1), checkpoint.Cancelled, storage.Pending, 0, "", time.Time{}},
		{"stopped before leaving", rec(storage.Pending, 1), checkpoint.Cancelled, storage.Pending, 1, "", time.Time{}},
		{"redirect to a visited page", rec(storage.InFlight, 1), checkpoint.Settled, storage.Done, 1, "boom", time.Time{}},
		{"done stays done", rec(storage.Done, 1), checkpoint.Queued, storage.Done, 1, "", time.Time{}},
		{"dead stays dead", rec(storage.Dead, 3), checkpoint.FailedAttempt, storage.Dead, 3, "", time.Time{}},
		{"dead is not parked", rec(storage.Dead, 3), checkpoint.Refused, storage.Dead, 3, "", time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkpoint.Transition(tc.from, tc.ev, max, "boom", retryAt)
			if got.State != tc.state || got.Attempts != tc.attempts || got.LastError != tc.lastErr || !got.NotBefore.Equal(tc.notBef) {
				t.Errorf("%v --%v--> %v attempts %d error %q not before %v; want %v attempts %d error %q not before %v",
					tc.from.State, tc.ev, got.State, got.Attempts, got.LastError, got.NotBefore, tc.state, tc.attempts, tc.lastErr, tc.notBef)
			}
			if got.ID != tc.from.ID || got.URL != tc.from.URL {
				t.Errorf("the transition changed the record's identity")
			}
		})
	}
}
