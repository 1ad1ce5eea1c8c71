package checkpoint

import (
	"testing"
	"time"

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
		ev       event
		state    storage.State
		attempts int
		lastErr  string
		notBef   time.Time
	}{
		{"discovered", storage.Record{ID: 1}, evQueued, storage.Pending, 0, "", time.Time{}},
		{"re-driven after a failure", rec(storage.Failed, 1), evQueued, storage.Pending, 1, "", time.Time{}},
		{"leaves", rec(storage.Pending, 0), evLeft, storage.InFlight, 1, "", time.Time{}},
		{"leaves again", rec(storage.Pending, 2), evLeft, storage.InFlight, 3, "", time.Time{}},
		{"success", rec(storage.InFlight, 1), evSucceeded, storage.Done, 1, "", time.Time{}},
		{"degraded, attempts left", rec(storage.InFlight, 1), evFailed, storage.Failed, 1, "boom", time.Time{}},
		{"degraded, last attempt", rec(storage.InFlight, max), evFailed, storage.Dead, max, "boom", time.Time{}},
		{"gone at the first attempt", rec(storage.InFlight, 1), evGone, storage.Dead, 1, "boom", time.Time{}},
		{"throttled: attempt given back", rec(storage.InFlight, 2), evThrottled, storage.Pending, 1, "boom", time.Time{}},
		{"throttled past the budget", rec(storage.InFlight, 1), evThrottledGaveUp, storage.Failed, 0, "boom", time.Time{}},
		{"refused before leaving", rec(storage.Pending, 1), evRefused, storage.Parked, 1, "boom", retryAt},
		{"refused at a redirect hop", rec(storage.InFlight, 1), evRefused, storage.Parked, 0, "boom", retryAt},
		{"cancelled in flight", rec(storage.InFlight, 1), evCancelled, storage.Pending, 0, "", time.Time{}},
		{"stopped before leaving", rec(storage.Pending, 1), evCancelled, storage.Pending, 1, "", time.Time{}},
		{"redirect to a visited page", rec(storage.InFlight, 1), evSettled, storage.Done, 1, "boom", time.Time{}},
		{"done stays done", rec(storage.Done, 1), evQueued, storage.Done, 1, "", time.Time{}},
		{"dead stays dead", rec(storage.Dead, 3), evFailed, storage.Dead, 3, "", time.Time{}},
		{"dead is not parked", rec(storage.Dead, 3), evRefused, storage.Dead, 3, "", time.Time{}},
		{"failed in an outage, attempts left", rec(storage.InFlight, 1), evFailedInOutage, storage.Failed, 1, "boom", time.Time{}},
		{"failed in an outage, last attempt", rec(storage.InFlight, max), evFailedInOutage, storage.Parked, max - 1, "boom (spared by an outage 1×)", retryAt},
		{"failed in an outage past the last attempt", rec(storage.InFlight, max+1), evFailedInOutage, storage.Parked, max - 1, "boom (spared by an outage 1×)", retryAt},
		{"dead stays dead in an outage", rec(storage.Dead, 3), evFailedInOutage, storage.Dead, 3, "", time.Time{}},
		{"spared twice, an outage spares it again", spared(rec(storage.InFlight, max), 2), evFailedInOutage, storage.Parked, max - 1, "boom (spared by an outage 3×)", retryAt},
		{"spared three times, the next outage kills it", spared(rec(storage.InFlight, max), outageSpares), evFailedInOutage, storage.Dead, max, "boom (spared by an outage 3×)", time.Time{}},
		{"a spared URL failing with the site up keeps its count", spared(rec(storage.InFlight, 1), 1), evFailed, storage.Failed, 1, "boom (spared by an outage 1×)", time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := transition(tc.from, tc.ev, max, "boom", retryAt)
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

// spared is r with n outages' spares counted in its last error.
func spared(r storage.Record, n int) storage.Record {
	r.LastError = withSpares("earlier", n)
	return r
}
