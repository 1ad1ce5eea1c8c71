package memory

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
)

// The store's records hold no pointer: that is what keeps the garbage
// collector out of them.
func TestEntryHoldsNoPointer(t *testing.T) {
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		switch ty.Kind() {
		case reflect.Struct:
			for i := range ty.NumField() {
				f := ty.Field(i)
				walk(f.Type, path+"."+f.Name)
			}
		case reflect.Array:
			walk(ty.Elem(), path+"[]")
		case reflect.Pointer, reflect.Slice, reflect.String, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
			t.Errorf("%s is a %s: an entry must hold no pointer", path, ty.Kind())
		}
	}
	walk(reflect.TypeFor[entry](), "entry")
}

// Values rewritten over and over are compacted away, and every record
// reads back as it was last put: URL, error, request (nil and empty told
// apart) and times.
func TestRewrittenValuesAreCompactedAndReadBack(t *testing.T) {
	s := New().(*store)
	const n = 500
	base := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	want := make([]storage.Record, n)
	for round := range 40 {
		for i := range n {
			r := storage.Record{ID: uint64(i), URL: fmt.Sprintf("http://shop-%d.test/p/%d", i%7, i), State: storage.States()[(i+round)%6],
				Attempts: round, Updated: base.Add(time.Duration(round) * time.Second)}
			switch i % 4 {
			case 0:
				r.Request = nil
			case 1:
				r.Request = []byte{}
			default:
				r.Request = []byte(strings.Repeat(fmt.Sprint(round), 200+i))
			}
			if i%3 == 0 {
				r.LastError = fmt.Sprintf("HTTP 503 in round %d", round)
				r.NotBefore = base.Add(time.Minute)
			}
			if i == 5 {
				r.URL = "" // an empty URL is a value too
			}
			if err := s.Put(r); err != nil {
				t.Fatal(err)
			}
			r.Seq = uint64(i) + 1
			want[i] = r
		}
	}
	live, dead, held := s.data.buf.Held()
	if s.data.buf.Wasteful() {
		t.Errorf("arena keeps %d dead bytes for %d live: not compacted", dead, live)
	}
	if held != live+dead {
		t.Errorf("arena holds %d bytes, counts %d live + %d dead", held, live, dead)
	}
	// And once more, so that what was put last has been moved too.
	s.mu.Lock()
	s.compactLocked()
	s.mu.Unlock()
	for i, w := range want {
		got, ok, err := s.Get(uint64(i))
		if err != nil || !ok {
			t.Fatalf("Get(%d) = %v, %v", i, ok, err)
		}
		if got.URL != w.URL || got.LastError != w.LastError || got.State != w.State || got.Attempts != w.Attempts ||
			got.Seq != w.Seq || !got.Updated.Equal(w.Updated) || !got.NotBefore.Equal(w.NotBefore) ||
			string(got.Request) != string(w.Request) || (got.Request == nil) != (w.Request == nil) {
			t.Fatalf("record %d read back as\n%+v\nwant\n%+v", i, got, w)
		}
	}
}
