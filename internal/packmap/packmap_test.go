package packmap

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// A Map answers as a Go map does through any mix of sets, overwrites and
// deletes, with keys that collide (a hash of their length) or not, across
// compactions.
func TestMapAnswersAsAGoMap(t *testing.T) {
	for _, collide := range []bool{false, true} {
		t.Run(fmt.Sprintf("collide=%v", collide), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var m Map
			if collide {
				m.hashOf = func(s string) uint64 { return uint64(len(s) % 7) }
			}
			want := map[string]string{}
			for i := range 200_000 {
				k := fmt.Sprintf("shop-%d.test", rng.IntN(3000))
				switch rng.IntN(10) {
				case 0, 1, 2:
					m.Delete(k)
					delete(want, k)
				default:
					v := strings.Repeat(string(rune('a'+i%26)), rng.IntN(300))
					if rng.IntN(5000) == 0 {
						v = strings.Repeat("x", 1<<16) // longer than a chunk
					}
					m.Set(k, v)
					want[k] = v
				}
				if i%997 == 0 {
					check(t, &m, want)
				}
			}
			check(t, &m, want)
			if m.buf.Wasteful() {
				live, dead, _ := m.buf.Held()
				t.Errorf("%d dead bytes for %d live: not compacted", dead, live)
			}
		})
	}
}

func check(t *testing.T, m *Map, want map[string]string) {
	t.Helper()
	if m.Len() != len(want) {
		t.Fatalf("Len %d, want %d", m.Len(), len(want))
	}
	got := map[string]string{}
	m.Range(func(k, v string) bool {
		if _, dup := got[k]; dup {
			t.Fatalf("Range gave %q twice", k)
		}
		got[k] = v
		return true
	})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Range gave %d keys, want %d (or different values)", len(got), len(want))
	}
	for k, v := range want {
		if g, ok := m.Get(k); !ok || g != v {
			t.Fatalf("Get(%q) = %q, %v; want %q", k, g, ok, v)
		}
	}
	if _, ok := m.Get("absent.test"); ok {
		t.Fatal("Get found a key never set")
	}
	used := 0
	for _, e := range m.index {
		_, _, n := parts(&m.buf, e)
		used += n
	}
	live, dead, held := m.buf.Held()
	if used != live || held != live+dead {
		t.Fatalf("entries use %d bytes, chunks hold %d; counted %d live + %d dead", used, held, live, dead)
	}
}

// An entry holds no pointer: that is what keeps the collector out.
func TestEntryHoldsNoPointer(t *testing.T) {
	ty := reflect.TypeFor[entry]()
	for i := range ty.NumField() {
		switch ty.Field(i).Type.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.String, reflect.Map, reflect.Interface:
			t.Errorf("entry.%s is a %s", ty.Field(i).Name, ty.Field(i).Type.Kind())
		}
	}
}

func TestRangeStops(t *testing.T) {
	var m Map
	for i := range 10 {
		m.Set(fmt.Sprint(i), "v")
	}
	n := 0
	m.Range(func(string, string) bool { n++; return n < 3 })
	if n != 3 {
		t.Fatalf("Range called f %d times after it returned false at 3", n)
	}
}

// An empty key with an empty value is an entry like any other.
func TestEmptyKeyAndValue(t *testing.T) {
	var m Map
	m.Set("", "")
	m.Set("a", "b")
	want := map[string]string{"": "", "a": "b"}
	check(t, &m, want)
	m.Delete("")
	delete(want, "")
	check(t, &m, want)
}
