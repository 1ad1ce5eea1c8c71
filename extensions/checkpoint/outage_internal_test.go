package checkpoint

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

func newOutageCP(t *testing.T, c Config) *Checkpoint {
	t.Helper()
	cp, err := New(memory.New(), c)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

func deadRec(id uint64, lastError string) storage.Record {
	return storage.Record{ID: id, URL: "http://a.test/p" + string(rune('a'+id%26)), State: storage.Dead,
		Attempts: DefaultMaxAttempts + 1, LastError: lastError}
}

// A trip parks what died since the last success: a dead record on disk,
// and one still held back for its page's links (which must not be written
// dead after it). A 404 stays dead, and so does what a success after it
// proved dead of its own; a live request for a revived URL starts from the
// parked record.
func TestReviveParksWhatDiedSinceTheLastSuccess(t *testing.T) {
	var logs bytes.Buffer
	cp := newOutageCP(t, Config{Logger: zerolog.New(&logs)})
	retryAt := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	const dom = "a.test"
	onDisk, held, gone, before := deadRec(1, "degraded: HTTP 503"), deadRec(2, "degraded: HTTP 503"),
		deadRec(3, "gone: HTTP 404"), deadRec(4, "degraded: HTTP 500")
	if err := cp.store.Put(onDisk, gone, before, storage.Record{ID: 2, URL: held.URL, State: storage.InFlight, Attempts: 3}); err != nil {
		t.Fatal(err)
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.rememberDead(dom, before.ID)
	ok := &entry{}
	ok.leftSeq = cp.outageSeq.Add(1) // a success that left after it died
	cp.succeeded(dom, ok)
	if len(cp.outage) != 0 {
		t.Fatalf("a success that left after the death kept %v", cp.outage[dom].ids)
	}
	early := &entry{}
	early.leftSeq = cp.outageSeq.Add(1) // left before the next deaths
	cp.held.push(heldRecord{rec: held, watermark: 1})
	cp.heldN.Add(1)
	for _, id := range []uint64{onDisk.ID, held.ID, gone.ID} {
		cp.rememberDead(dom, id)
	}
	cp.succeeded(dom, early)
	if n := len(cp.outage[dom].ids); n != 3 {
		t.Fatalf("a success that left before they died forgot them: %d remembered, want 3", n)
	}
	live := &entry{id: held.ID, rec: held, queued: true}
	cp.live.put(&colly.Request{}, live)
	cp.reviveLocked(dom, retryAt, false)
	cp.release(true)
	for _, want := range []struct {
		rec   storage.Record
		state storage.State
	}{{onDisk, storage.Parked}, {held, storage.Parked}, {gone, storage.Dead}, {before, storage.Dead}} {
		got, _, err := cp.store.Get(want.rec.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != want.state {
			t.Errorf("record %d (%q): %v, want %v", want.rec.ID, want.rec.LastError, got.State, want.state)
		}
		if want.state == storage.Parked && (got.Attempts != DefaultMaxAttempts-1 || !got.NotBefore.Equal(retryAt) || got.LastError != withSpares(want.rec.LastError, 1)) {
			t.Errorf("record %d: %d attempts, not before %v, %q; want %d, %v, its last error kept with one spare counted",
				got.ID, got.Attempts, got.NotBefore, got.LastError, DefaultMaxAttempts-1, retryAt)
		}
	}
	if live.rec.State != storage.Parked {
		t.Errorf("the live request's record is %v; want the parked one", live.rec.State)
	}
	if len(cp.outage) != 0 {
		t.Errorf("the domain's dead URLs are still remembered after the trip")
	}
	if n := strings.Count(logs.String(), `"event":"checkpoint_outage_revived"`); n != 1 || !strings.Contains(logs.String(), `"revived":2`) {
		t.Errorf("log %s: want one revival event, 2 revived", logs.String())
	}
}

// The memory is bounded per domain: past outageMemory a death is counted,
// not remembered.
func TestOutageMemoryIsBounded(t *testing.T) {
	cp := newOutageCP(t, Config{})
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for id := uint64(1); id <= outageMemory+10; id++ {
		cp.rememberDead("a.test", id)
	}
	cp.rememberDead("a.test", 1) // already remembered
	cp.rememberDead("b.test", 1)
	if od := cp.outage["a.test"]; len(od.ids) != outageMemory || od.forgotten != 10 {
		t.Errorf("%d remembered, %d forgotten; want %d, 10", len(od.ids), od.forgotten, outageMemory)
	}
	if len(cp.outage["b.test"].ids) != 1 {
		t.Errorf("another domain's memory is not its own")
	}
}
