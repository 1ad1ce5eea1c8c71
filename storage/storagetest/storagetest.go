package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
)

// Opener returns a new, empty store for one subtest. Run closes it.
type Opener func(t *testing.T) storage.Store

// Run runs the conformance suite against the stores open returns.
func Run(t *testing.T, open Opener) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, storage.Store)
	}{
		{"EmptyStore", testEmpty},
		{"PutAssignsSeqInFirstPutOrder", testSeqOrder},
		{"UpsertKeepsSeqAndReplacesFields", testUpsert},
		{"GetReturnsEveryField", testRoundTrip},
		{"UpdatedIsStampedWhenZero", testUpdatedStamp},
		{"ReadYourWritesBeforeFlush", testReadYourWrites},
		{"SameIDTwiceInOnePutLaterWins", testDuplicateInOnePut},
		{"ScanOrdersBySeqAndFiltersByState", testScanFilter},
		{"ScanStopsOnCallbackError", testScanStops},
		{"ScanCallbackMayWriteAndFlush", testScanWrites},
		{"CountsFollowStateChanges", testCounts},
		{"MetaRoundTrip", testMeta},
		{"InvalidInputIsRejectedWhole", testInvalid},
		{"StoreKeepsItsOwnCopies", testCopies},
		{"CloseIsIdempotentAndFinal", testClose},
		{"ConcurrentUse", testConcurrent},
		{"LargeVolume", testLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
	// A store that keeps outputs (storage.OutputStore) keeps them so.
	for _, tc := range outputTests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			o, ok := s.(storage.OutputStore)
			if !ok {
				t.Skipf("%T keeps no outputs", s)
			}
			tc.fn(t, o)
		})
	}
}

// rec returns a record for URL number i in state st.
func rec(i int, st storage.State) storage.Record {
	return storage.Record{
		ID:    uint64(i)*0x9E3779B97F4A7C15 + 1, // spread like a hash
		URL:   fmt.Sprintf("http://127.0.0.1/item/%d", i),
		State: st,
	}
}

func mustPut(t *testing.T, s storage.Store, recs ...storage.Record) {
	t.Helper()
	if err := s.Put(recs...); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

func mustGet(t *testing.T, s storage.Store, id uint64) storage.Record {
	t.Helper()
	r, ok, err := s.Get(id)
	if err != nil {
		t.Fatalf("Get(%d): %v", id, err)
	}
	if !ok {
		t.Fatalf("Get(%d): not found", id)
	}
	return r
}

func scanAll(t *testing.T, s storage.Store, states ...storage.State) []storage.Record {
	t.Helper()
	var out []storage.Record
	if err := s.Scan(func(r storage.Record) error { out = append(out, r); return nil }, states...); err != nil {
		t.Fatalf("Scan(%v): %v", states, err)
	}
	return out
}

func mustCounts(t *testing.T, s storage.Store) map[storage.State]int {
	t.Helper()
	c, err := s.Counts()
	if err != nil {
		t.Fatalf("Counts: %v", err)
	}
	return c
}

func checkCounts(t *testing.T, s storage.Store, want map[storage.State]int) {
	t.Helper()
	got := mustCounts(t, s)
	for _, st := range storage.States() {
		if got[st] != want[st] {
			t.Errorf("Counts()[%v] = %d, want %d (all: %v)", st, got[st], want[st], got)
		}
	}
	for st, n := range got {
		if n == 0 {
			t.Errorf("Counts() has a zero entry for %v; states with no records must be absent", st)
		}
	}
}

func testEmpty(t *testing.T, s storage.Store) {
	if r, ok, err := s.Get(42); err != nil || ok || r.ID != 0 || r.URL != "" {
		t.Errorf("Get on empty store = %+v, %v, %v; want zero, false, nil", r, ok, err)
	}
	if got := scanAll(t, s); len(got) != 0 {
		t.Errorf("Scan on empty store returned %d records", len(got))
	}
	if c := mustCounts(t, s); len(c) != 0 {
		t.Errorf("Counts on empty store = %v, want empty", c)
	}
	if v, ok, err := s.Meta("run"); err != nil || ok || v != nil {
		t.Errorf("Meta on empty store = %q, %v, %v; want nil, false, nil", v, ok, err)
	}
	if err := s.Flush(); err != nil {
		t.Errorf("Flush on empty store: %v", err)
	}
}

func testSeqOrder(t *testing.T, s storage.Store) {
	mustPut(t, s, rec(3, storage.Pending))
	mustPut(t, s, rec(1, storage.Pending), rec(2, storage.Done))
	mustPut(t, s, rec(0, storage.Failed))
	order := []int{3, 1, 2, 0}
	var last uint64
	for _, i := range order {
		r := mustGet(t, s, rec(i, 0).ID)
		if r.Seq <= last {
			t.Fatalf("record %d has Seq %d, not above the previous record's %d: Seq must follow first-Put order", i, r.Seq, last)
		}
		last = r.Seq
	}
	got := scanAll(t, s)
	if len(got) != len(order) {
		t.Fatalf("Scan returned %d records, want %d", len(got), len(order))
	}
	for k, i := range order {
		if got[k].ID != rec(i, 0).ID {
			t.Errorf("Scan position %d holds %s, want %s", k, got[k].URL, rec(i, 0).URL)
		}
	}
}

func testUpsert(t *testing.T, s storage.Store) {
	a, b := rec(1, storage.Pending), rec(2, storage.Pending)
	mustPut(t, s, a, b)
	seqA := mustGet(t, s, a.ID).Seq

	a.State = storage.Failed
	a.Attempts = 2
	a.LastError = "503 Service Unavailable"
	a.NotBefore = time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	a.Seq = 999999 // ignored
	mustPut(t, s, a)
	got := mustGet(t, s, a.ID)
	if got.Seq != seqA {
		t.Errorf("Seq changed on upsert: %d -> %d", seqA, got.Seq)
	}
	if got.State != storage.Failed || got.Attempts != 2 || got.LastError != a.LastError || !got.NotBefore.Equal(a.NotBefore) {
		t.Errorf("upsert did not replace fields: got %+v", got)
	}
	// Upsert must not move the record in the frontier.
	if all := scanAll(t, s); len(all) != 2 || all[0].ID != a.ID || all[1].ID != b.ID {
		t.Errorf("Scan after upsert = %v, want a then b", urls(all))
	}
	// A record put again after other records keeps its place too.
	a.State = storage.Done
	mustPut(t, s, rec(3, storage.Pending), a)
	if got := mustGet(t, s, a.ID); got.Seq != seqA || got.State != storage.Done {
		t.Errorf("after second upsert: Seq %d State %v, want %d done", got.Seq, got.State, seqA)
	}
}

func testRoundTrip(t *testing.T, s storage.Store) {
	want := storage.Record{
		ID:        0xFFFF_FFFF_FFFF_FFFF,
		URL:       "https://127.0.0.1:8443/p?q=ü&x=%20#frag",
		State:     storage.Parked,
		Attempts:  7,
		LastError: "circuit open: 127.0.0.1:8443\nsecond line",
		NotBefore: time.Date(2031, 7, 8, 9, 10, 11, 123456789, time.FixedZone("X", 3600)),
		Request:   []byte(`{"URL":"https://127.0.0.1:8443/p","Method":"GET","Depth":2,"Body":null}` + "\x00\xff"),
		Updated:   time.Date(2026, 1, 1, 0, 0, 0, 1, time.UTC),
	}
	zeroID := storage.Record{ID: 0, URL: "", State: storage.Dead}
	mustPut(t, s, want, zeroID)
	got := mustGet(t, s, want.ID)
	if got.ID != want.ID || got.URL != want.URL || got.State != want.State || got.Attempts != want.Attempts ||
		got.LastError != want.LastError || !bytes.Equal(got.Request, want.Request) {
		t.Errorf("round trip changed the record:\n got %+v\nwant %+v", got, want)
	}
	if !got.NotBefore.Equal(want.NotBefore) || !got.Updated.Equal(want.Updated) {
		t.Errorf("round trip changed the times: NotBefore %v (want %v), Updated %v (want %v)",
			got.NotBefore, want.NotBefore, got.Updated, want.Updated)
	}
	if got.Seq == 0 {
		t.Errorf("Seq is 0; stores assign Seqs from 1")
	}
	z := mustGet(t, s, 0)
	if z.State != storage.Dead || z.Request != nil || !z.NotBefore.IsZero() || z.Attempts != 0 || z.LastError != "" {
		t.Errorf("ID 0 with zero fields came back as %+v; want zero fields and nil Request", z)
	}
}

func testUpdatedStamp(t *testing.T, s storage.Store) {
	before := time.Now().Add(-time.Second)
	mustPut(t, s, rec(1, storage.Pending))
	got := mustGet(t, s, rec(1, 0).ID)
	if got.Updated.Before(before) || got.Updated.After(time.Now().Add(time.Second)) {
		t.Errorf("Updated = %v; a zero Updated must be set to the current time", got.Updated)
	}
	fixed := time.Date(2020, 2, 2, 2, 2, 2, 0, time.UTC)
	r := rec(2, storage.Pending)
	r.Updated = fixed
	mustPut(t, s, r)
	if got := mustGet(t, s, r.ID); !got.Updated.Equal(fixed) {
		t.Errorf("Updated = %v; a caller's Updated must be kept (%v)", got.Updated, fixed)
	}
}

func testReadYourWrites(t *testing.T, s storage.Store) {
	// Nothing here calls Flush: every read must see the writes at once.
	for i := range 50 {
		mustPut(t, s, rec(i, storage.Pending))
		if got := mustGet(t, s, rec(i, 0).ID); got.State != storage.Pending {
			t.Fatalf("Get right after Put: state %v", got.State)
		}
		r := rec(i, storage.InFlight)
		mustPut(t, s, r)
		if got := mustGet(t, s, r.ID); got.State != storage.InFlight {
			t.Fatalf("Get right after update: state %v", got.State)
		}
	}
	checkCounts(t, s, map[storage.State]int{storage.InFlight: 50})
	if got := scanAll(t, s, storage.InFlight); len(got) != 50 {
		t.Errorf("Scan(in-flight) right after Put: %d records, want 50", len(got))
	}
	if got := scanAll(t, s, storage.Pending); len(got) != 0 {
		t.Errorf("Scan(pending) right after moving all to in-flight: %d records, want 0", len(got))
	}
	if err := s.SetMeta("k", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.Meta("k"); err != nil || !ok || string(v) != "v1" {
		t.Errorf("Meta right after SetMeta = %q, %v, %v", v, ok, err)
	}
}

func testDuplicateInOnePut(t *testing.T, s storage.Store) {
	a := rec(1, storage.Pending)
	b := rec(1, storage.Done)
	b.Attempts = 1
	mustPut(t, s, a, rec(2, storage.Pending), b)
	got := mustGet(t, s, a.ID)
	if got.State != storage.Done || got.Attempts != 1 {
		t.Errorf("later duplicate did not win: %+v", got)
	}
	checkCounts(t, s, map[storage.State]int{storage.Done: 1, storage.Pending: 1})
	if all := scanAll(t, s); len(all) != 2 || all[0].ID != a.ID {
		t.Errorf("Scan = %v, want the duplicated record once, first", urls(all))
	}
}

func testScanFilter(t *testing.T, s storage.Store) {
	states := storage.States()
	const n = 60
	for i := range n {
		mustPut(t, s, rec(i, states[i%len(states)]))
	}
	// Move some records between states: they must keep their place.
	for i := 0; i < n; i += 4 {
		mustPut(t, s, rec(i, storage.Failed))
	}
	want := make(map[uint64]storage.State)
	for i := range n {
		st := states[i%len(states)]
		if i%4 == 0 {
			st = storage.Failed
		}
		want[rec(i, 0).ID] = st
	}
	check := func(filter ...storage.State) {
		t.Helper()
		got := scanAll(t, s, filter...)
		in := func(st storage.State) bool {
			if len(filter) == 0 {
				return true
			}
			for _, f := range filter {
				if f == st {
					return true
				}
			}
			return false
		}
		wantN := 0
		for _, st := range want {
			if in(st) {
				wantN++
			}
		}
		if len(got) != wantN {
			t.Errorf("Scan(%v) returned %d records, want %d", filter, len(got), wantN)
		}
		var last uint64
		for _, r := range got {
			if r.Seq <= last {
				t.Errorf("Scan(%v): Seq %d after %d; want ascending", filter, r.Seq, last)
			}
			last = r.Seq
			if !in(r.State) || want[r.ID] != r.State {
				t.Errorf("Scan(%v) returned %s in state %v (stored: %v)", filter, r.URL, r.State, want[r.ID])
			}
		}
	}
	check()
	check(storage.States()...)
	check(storage.Pending)
	check(storage.Failed)
	check(storage.Pending, storage.InFlight, storage.Failed, storage.Parked)
	check(storage.Dead, storage.Pending) // order of the filter does not matter
	check(storage.Done, storage.Done)    // nor repeats
}

func testScanStops(t *testing.T, s storage.Store) {
	for i := range 20 {
		mustPut(t, s, rec(i, storage.Pending))
	}
	stop := errors.New("enough")
	calls := 0
	err := s.Scan(func(storage.Record) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Errorf("Scan returned %v, want the callback's error unchanged", err)
	}
	if calls != 3 {
		t.Errorf("callback ran %d times after returning an error at call 3", calls)
	}
}

func testScanWrites(t *testing.T, s storage.Store) {
	const n = 700 // more than one chunk in every backend here
	for i := range n {
		mustPut(t, s, rec(i, storage.Pending))
	}
	seen := make(map[uint64]int)
	added := 0
	err := s.Scan(func(r storage.Record) error {
		seen[r.ID]++
		r.State = storage.Done
		if err := s.Put(r); err != nil {
			return err
		}
		if added < 5 { // new pending records, ahead of the scan: must be seen
			mustPut(t, s, rec(n+added, storage.Pending))
			added++
		}
		if len(seen)%200 == 0 {
			return s.Flush()
		}
		return nil
	}, storage.Pending)
	if err != nil {
		t.Fatalf("Scan with writes in the callback: %v", err)
	}
	if len(seen) != n+added {
		t.Errorf("scan saw %d records, want %d (the %d records plus %d added ahead of it)", len(seen), n+added, n, added)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("record %d seen %d times; want once", id, c)
		}
	}
	checkCounts(t, s, map[storage.State]int{storage.Done: n + added})
}

func testCounts(t *testing.T, s storage.Store) {
	want := make(map[storage.State]int)
	state := make(map[int]storage.State)
	set := func(i int, st storage.State) {
		if old, ok := state[i]; ok {
			want[old]--
		}
		state[i] = st
		want[st]++
		mustPut(t, s, rec(i, st))
	}
	for i := range 30 {
		set(i, storage.Pending)
	}
	for i := range 20 {
		set(i, storage.InFlight)
	}
	for i := range 10 {
		set(i, storage.Done)
	}
	set(10, storage.Failed)
	set(11, storage.Parked)
	set(12, storage.Dead)
	set(12, storage.Dead) // same state again
	checkCounts(t, s, want)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s, want)
}

func testMeta(t *testing.T, s storage.Store) {
	bin := []byte{0, 1, 2, 0xff, 0}
	for k, v := range map[string][]byte{"run": []byte(`{"started":"2026"}`), "breaker/127.0.0.1:80": bin, "empty": {}} {
		if err := s.SetMeta(k, v); err != nil {
			t.Fatalf("SetMeta(%q): %v", k, err)
		}
	}
	if err := s.SetMeta("nil", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta("run", []byte("second")); err != nil {
		t.Fatal(err)
	}
	flushAndCheck := func() {
		t.Helper()
		for k, want := range map[string]string{"run": "second", "breaker/127.0.0.1:80": string(bin), "empty": "", "nil": ""} {
			v, ok, err := s.Meta(k)
			if err != nil || !ok || string(v) != want {
				t.Errorf("Meta(%q) = %q, %v, %v; want %q, true, nil", k, v, ok, err, want)
			}
		}
		if _, ok, err := s.Meta("absent"); ok || err != nil {
			t.Errorf("Meta(absent) = %v, %v; want false, nil", ok, err)
		}
	}
	flushAndCheck()
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	flushAndCheck()
}

func testInvalid(t *testing.T, s storage.Store) {
	good := rec(1, storage.Pending)
	for name, bad := range map[string]storage.Record{
		"zero state":        rec(2, 0),
		"state past Dead":   rec(2, storage.Dead+1),
		"negative attempts": {ID: 2, State: storage.Pending, Attempts: -1},
	} {
		if err := s.Put(good, bad); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("Put with %s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, ok, _ := s.Get(good.ID); ok {
		t.Errorf("a Put that failed validation stored its valid record too; Put must store none")
	}
	if c := mustCounts(t, s); len(c) != 0 {
		t.Errorf("Counts after rejected Puts = %v, want empty", c)
	}
	if err := s.Scan(func(storage.Record) error { return nil }, storage.Pending, storage.State(0)); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("Scan for State(0): err = %v, want ErrInvalid", err)
	}
	if err := s.SetMeta("", []byte("x")); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("SetMeta with empty key: err = %v, want ErrInvalid", err)
	}
	long := string(bytes.Repeat([]byte("k"), storage.MaxMetaKeyLen+1))
	if err := s.SetMeta(long, []byte("x")); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("SetMeta with a %d-byte key: err = %v, want ErrInvalid", len(long), err)
	}
}

func testCopies(t *testing.T, s storage.Store) {
	r := rec(1, storage.Pending)
	r.Request = []byte("original")
	mustPut(t, s, r)
	r.Request[0] = 'X' // the caller reuses its buffer
	got := mustGet(t, s, r.ID)
	if string(got.Request) != "original" {
		t.Errorf("store kept the caller's slice: Request = %q", got.Request)
	}
	got.Request[0] = 'Y' // the caller scribbles on what it got
	if again := mustGet(t, s, r.ID); string(again.Request) != "original" {
		t.Errorf("store handed out its own slice: Request = %q", again.Request)
	}
	v := []byte("meta")
	if err := s.SetMeta("k", v); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	m, _, _ := s.Meta("k")
	m[1] = 'Y'
	if again, _, _ := s.Meta("k"); string(again) != "meta" {
		t.Errorf("metadata shares memory with the caller: %q", again)
	}
}

func testClose(t *testing.T, s storage.Store) {
	mustPut(t, s, rec(1, storage.Pending))
	if err := s.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
	checks := map[string]error{
		"Put":     s.Put(rec(2, storage.Pending)),
		"Flush":   s.Flush(),
		"SetMeta": s.SetMeta("k", nil),
		"Scan":    s.Scan(func(storage.Record) error { return nil }),
	}
	_, _, checks["Get"] = s.Get(1)
	_, checks["Counts"] = s.Counts()
	_, _, checks["Meta"] = s.Meta("k")
	for name, err := range checks {
		if !errors.Is(err, storage.ErrClosed) {
			t.Errorf("%s after Close: err = %v, want ErrClosed", name, err)
		}
	}
}

func testConcurrent(t *testing.T, s storage.Store) {
	const workers, perWorker = 4, 300
	var wg sync.WaitGroup
	errs := make(chan error, workers*2)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				n := w*perWorker + i
				for _, st := range []storage.State{storage.Pending, storage.InFlight, storage.Done} {
					if err := s.Put(rec(n, st)); err != nil {
						errs <- err
						return
					}
				}
				if r, ok, err := s.Get(rec(n, 0).ID); err != nil || !ok || r.State != storage.Done {
					errs <- fmt.Errorf("Get(%d) after own Put = %v, %v, %v", n, r.State, ok, err)
					return
				}
				if i%50 == 0 {
					if err := s.SetMeta(fmt.Sprintf("w%d", w), []byte{byte(i)}); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	// Readers and flushers alongside the writers.
	stop := make(chan struct{})
	var rg sync.WaitGroup
	rg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			var last uint64
			err := s.Scan(func(r storage.Record) error {
				if r.Seq <= last {
					return fmt.Errorf("concurrent Scan: Seq %d after %d", r.Seq, last)
				}
				last = r.Seq
				return nil
			}, storage.Pending, storage.Done)
			if err != nil {
				errs <- err
				return
			}
			if _, err := s.Counts(); err != nil {
				errs <- err
				return
			}
			if err := s.Flush(); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(stop)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkCounts(t, s, map[storage.State]int{storage.Done: workers * perWorker})
	seqs := make(map[uint64]bool)
	for _, r := range scanAll(t, s) {
		if seqs[r.Seq] {
			t.Errorf("Seq %d given to two records", r.Seq)
		}
		seqs[r.Seq] = true
	}
	if len(seqs) != workers*perWorker {
		t.Errorf("Scan found %d records, want %d", len(seqs), workers*perWorker)
	}
}

func testLarge(t *testing.T, s storage.Store) {
	n := 30000
	if testing.Short() {
		n = 5000
	}
	batch := make([]storage.Record, 0, 500)
	for i := range n {
		r := rec(i, storage.Pending)
		r.Request = bytes.Repeat([]byte{byte(i)}, 100)
		batch = append(batch, r)
		if len(batch) == cap(batch) {
			mustPut(t, s, batch...)
			batch = batch[:0]
		}
	}
	mustPut(t, s, batch...)
	// Finish every third URL, fail every seventh of the rest.
	want := map[storage.State]int{}
	for i := range n {
		st := storage.Pending
		switch {
		case i%3 == 0:
			st = storage.Done
		case i%7 == 0:
			st = storage.Failed
		}
		want[st]++
		if st != storage.Pending {
			mustPut(t, s, rec(i, st))
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s, want)
	got := scanAll(t, s, storage.Pending, storage.Failed)
	if len(got) != want[storage.Pending]+want[storage.Failed] {
		t.Fatalf("Scan(pending, failed) = %d records, want %d", len(got), want[storage.Pending]+want[storage.Failed])
	}
	for k := 1; k < len(got); k++ {
		if got[k].Seq <= got[k-1].Seq {
			t.Fatalf("Scan order broken at %d: %d after %d", k, got[k].Seq, got[k-1].Seq)
		}
	}
	for i := n - 1; i >= 0; i-- {
		if i%3 != 0 && i%7 != 0 { // the last record never updated
			r := mustGet(t, s, rec(i, 0).ID)
			if !bytes.Equal(r.Request, bytes.Repeat([]byte{byte(i)}, 100)) {
				t.Errorf("record %d lost its Request: %d bytes", i, len(r.Request))
			}
			break
		}
	}
}

func urls(rs []storage.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.URL
	}
	return out
}
