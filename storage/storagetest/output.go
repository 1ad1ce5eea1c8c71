package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage"
)

// outputTests are run by Run on a store that is a storage.OutputStore.
var outputTests = []struct {
	name string
	fn   func(*testing.T, storage.OutputStore)
}{
	{"OutputKeepsOneEntryPerURLAndOutput", testOutputOnce},
	{"OutputIsCommittedWithItsRecords", testOutputWithRecords},
	{"OutputInvalidEntryStoresNothing", testOutputInvalid},
	{"OutputLargeBatchIsOneLog", testOutputLarge},
	{"OutputConcurrentWritersTakeEachURLOnce", testOutputConcurrent},
	{"OutputAfterCloseIsErrClosed", testOutputClosed},
}

func out(output, part string, id uint64, data string) storage.OutputEntry {
	return storage.OutputEntry{Output: output, Part: part, ID: id, Data: []byte(data)}
}

func mustPutOutput(t *testing.T, s storage.OutputStore, entries []storage.OutputEntry, recs ...storage.Record) []storage.OutputEntry {
	t.Helper()
	took, err := s.PutOutput(entries, recs...)
	if err != nil {
		t.Fatalf("PutOutput: %v", err)
	}
	return took
}

func scanOutput(t *testing.T, s storage.OutputStore, output, part string) []storage.OutputEntry {
	t.Helper()
	var got []storage.OutputEntry
	if err := s.ScanOutput(output, part, func(e storage.OutputEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatalf("ScanOutput(%q, %q): %v", output, part, err)
	}
	return got
}

// logString renders a log as "pos:id:data" items, to compare.
func logString(es []storage.OutputEntry) string {
	var b bytes.Buffer
	for _, e := range es {
		fmt.Fprintf(&b, "%d:%d:%s ", e.Pos, e.ID, e.Data)
	}
	return b.String()
}

func testOutputOnce(t *testing.T, s storage.OutputStore) {
	took := mustPutOutput(t, s, []storage.OutputEntry{
		out("o", "a", 1, "one\n"), out("o", "a", 2, "two\n"), out("o", "a", 1, "again\n"), // 1 twice in one call
		out("o", "b", 3, "three\n"), out("p", "a", 1, "other output\n"),
	})
	if got, want := logString(took), "0:1:one\n 1:2:two\n 0:3:three\n 0:1:other output\n "; got != want {
		t.Errorf("taken %q, want %q", got, want)
	}
	// Another part, a later call: 1 and 3 are in "o" already.
	took = mustPutOutput(t, s, []storage.OutputEntry{out("o", "b", 1, "late\n"), out("o", "a", 3, "late\n"), out("o", "b", 4, "four\n")})
	if got, want := logString(took), "1:4:four\n "; got != want {
		t.Errorf("second call took %q, want %q", got, want)
	}
	for _, c := range []struct{ output, part, want string }{
		{"o", "a", "0:1:one\n 1:2:two\n "},
		{"o", "b", "0:3:three\n 1:4:four\n "},
		{"p", "a", "0:1:other output\n "},
		{"o", "", ""},
		{"nothing", "a", ""},
	} {
		if got := logString(scanOutput(t, s, c.output, c.part)); got != c.want {
			t.Errorf("log (%q, %q) = %q, want %q", c.output, c.part, got, c.want)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := s.ScanOutput("o", "a", func(storage.OutputEntry) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("ScanOutput stopped by fn: %v after %d entries, want fn's error after 1", err, n)
	}
}

func testOutputWithRecords(t *testing.T, s storage.OutputStore) {
	r1, r2 := rec(1, storage.Done), rec(2, storage.Done)
	mustPutOutput(t, s, []storage.OutputEntry{out("o", "", r1.ID, "x\n")}, r1, r2)
	for _, r := range []storage.Record{r1, r2} {
		if got := mustGet(t, s, r.ID); got.State != storage.Done || got.URL != r.URL {
			t.Errorf("record %d after PutOutput: %+v", r.ID, got)
		}
	}
	// Records alone, no entry: a page done without records.
	mustPutOutput(t, s, nil, rec(3, storage.Done))
	if got := mustGet(t, s, rec(3, 0).ID); got.State != storage.Done {
		t.Errorf("record 3 put without entries: %+v", got)
	}
	data := []byte("mine\n")
	e := storage.OutputEntry{Output: "o", ID: 9, Data: data}
	mustPutOutput(t, s, []storage.OutputEntry{e})
	data[0] = 'X' // the store keeps its own copy
	if got := logString(scanOutput(t, s, "o", "")); got != "0:"+fmt.Sprint(r1.ID)+":x\n 1:9:mine\n " {
		t.Errorf("log %q", got)
	}
}

func testOutputInvalid(t *testing.T, s storage.OutputStore) {
	r := rec(1, storage.Done)
	for name, e := range map[string]storage.OutputEntry{
		"no output": {ID: 1, Data: []byte("x\n")},
		"no data":   {Output: "o", ID: 1},
	} {
		if _, err := s.PutOutput([]storage.OutputEntry{out("o", "", 2, "fine\n"), e}, r); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, ok, err := s.Get(r.ID); ok || err != nil {
		t.Errorf("the record of a refused PutOutput was stored (%v)", err)
	}
	if got := scanOutput(t, s, "o", ""); len(got) != 0 {
		t.Errorf("entries of a refused PutOutput were stored: %q", logString(got))
	}
}

func testOutputLarge(t *testing.T, s storage.OutputStore) {
	const n = 1200 // over any backend's batch
	entries := make([]storage.OutputEntry, n)
	recs := make([]storage.Record, n)
	for i := range n {
		recs[i] = rec(i, storage.Done)
		entries[i] = out("o", "w", recs[i].ID, fmt.Sprintf("line %d\n", i))
	}
	if took := mustPutOutput(t, s, entries, recs...); len(took) != n {
		t.Fatalf("took %d of %d", len(took), n)
	}
	got := scanOutput(t, s, "o", "w")
	if len(got) != n {
		t.Fatalf("log of %d entries, want %d", len(got), n)
	}
	for i, e := range got {
		if e.Pos != uint64(i) || e.ID != recs[i].ID || string(e.Data) != fmt.Sprintf("line %d\n", i) {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	if c := mustCounts(t, s); c[storage.Done] != n {
		t.Errorf("counts %v, want %d done", c, n)
	}
}

func testOutputConcurrent(t *testing.T, s storage.OutputStore) {
	const writers, urls = 4, 50
	var wg sync.WaitGroup
	took := make([][]storage.OutputEntry, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range urls {
				r := rec(i, storage.Done)
				got, err := s.PutOutput([]storage.OutputEntry{out("o", fmt.Sprint(w), r.ID, fmt.Sprintf("%d by %d\n", i, w))}, r)
				if err != nil {
					t.Error(err)
					return
				}
				took[w] = append(took[w], got...)
			}
		})
	}
	wg.Wait()
	seen := map[uint64]int{}
	for w := range writers {
		log := scanOutput(t, s, "o", fmt.Sprint(w))
		if logString(log) != logString(took[w]) {
			t.Errorf("writer %d: log %q, taken %q", w, logString(log), logString(took[w]))
		}
		for _, e := range log {
			seen[e.ID]++
		}
	}
	for i := range urls {
		if n := seen[rec(i, 0).ID]; n != 1 {
			t.Errorf("URL %d in %d logs, want 1", i, n)
		}
	}
}

func testOutputClosed(t *testing.T, s storage.OutputStore) {
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutOutput([]storage.OutputEntry{out("o", "", 1, "x\n")}); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("PutOutput after Close: %v, want ErrClosed", err)
	}
	if err := s.ScanOutput("o", "", func(storage.OutputEntry) error { return nil }); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("ScanOutput after Close: %v, want ErrClosed", err)
	}
}
