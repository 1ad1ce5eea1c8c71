package domains

import (
	"strconv"
	"testing"
)

// Range may be given to a sweep that deletes what it is yielded, and a
// map that lost most of its domains gives its room back on Shrink.
func TestTheLiveMapRangesWhileDeletingAndShrinks(t *testing.T) {
	var l liveMap
	l.init()
	const n = 4096
	for i := range n {
		name := "shop-" + strconv.Itoa(i) + ".test"
		l.Store(name, &Domain{Name: name})
	}
	seen := map[string]int{}
	for d := range l.Range {
		seen[d.Name]++
		if len(d.Name)%2 == 0 && !l.CompareAndDelete(d.Name, d) {
			t.Fatalf("CompareAndDelete(%s) refused the domain the map holds", d.Name)
		}
	}
	if len(seen) != n {
		t.Fatalf("Range yielded %d domains, want %d", len(seen), n)
	}
	kept := 0
	for name, k := range seen {
		if k != 1 {
			t.Fatalf("Range yielded %s %d times", name, k)
		}
		if d, ok := l.Load(name); ok != (len(name)%2 == 1) {
			t.Fatalf("Load(%s) = %v after the sweep", name, ok)
		} else if ok {
			kept++
			if d.Name != name {
				t.Fatalf("Load(%s) returned %s", name, d.Name)
			}
		}
	}
	if l.CompareAndDelete("shop-1.test", &Domain{Name: "shop-1.test"}) {
		t.Fatal("CompareAndDelete deleted a domain it was not given")
	}
	// Delete all but a few: every shard falls under a quarter of its peak.
	for d := range l.Range {
		if d.Name != "shop-1.test" {
			l.CompareAndDelete(d.Name, d)
		}
	}
	l.Shrink()
	peaks := 0
	for i := range l.shards {
		peaks += l.shards[i].peak
	}
	if peaks != 1 {
		t.Fatalf("after Shrink the shards' peaks add up to %d, want 1 (the one domain left)", peaks)
	}
	if _, ok := l.Load("shop-1.test"); !ok {
		t.Fatal("Shrink lost the domain left")
	}
}

// Names whose hashes collide are kept apart: each is found, replaced,
// deleted and ranged over as its own, whichever holds the shared slot.
func TestTheLiveMapKeepsCollidingNamesApart(t *testing.T) {
	var l liveMap
	l.init()
	l.hashOf = func(string) uint64 { return 7 }
	names := []string{"a.test", "b.test", "c.test"}
	doms := map[string]*Domain{}
	for _, n := range names {
		doms[n] = &Domain{Name: n}
		l.Store(n, doms[n])
	}
	check := func(when string, want map[string]*Domain) {
		t.Helper()
		for _, n := range names {
			d, ok := l.Load(n)
			if w := want[n]; ok != (w != nil) || d != w {
				t.Fatalf("%s: Load(%s) = %p, %v; want %p", when, n, d, ok, w)
			}
		}
		seen := 0
		for d := range l.Range {
			if want[d.Name] != d {
				t.Fatalf("%s: Range yielded %s, not the domain stored", when, d.Name)
			}
			seen++
		}
		if seen != len(want) {
			t.Fatalf("%s: Range yielded %d domains, want %d", when, seen, len(want))
		}
	}
	check("stored", doms)
	b2 := &Domain{Name: "b.test"}
	l.Store("b.test", b2)
	doms["b.test"] = b2
	check("b replaced", doms)
	if l.CompareAndDelete("a.test", &Domain{Name: "a.test"}) || l.CompareAndDelete("b.test", &Domain{Name: "b.test"}) {
		t.Fatal("CompareAndDelete deleted a domain it was not given")
	}
	if !l.CompareAndDelete("a.test", doms["a.test"]) {
		t.Fatal("CompareAndDelete refused a, which holds the slot")
	}
	delete(doms, "a.test")
	check("a deleted", doms)
	a2 := &Domain{Name: "a.test"}
	l.Store("a.test", a2)
	doms["a.test"] = a2
	check("a back", doms)
	for _, n := range []string{"c.test", "b.test", "a.test"} {
		if !l.CompareAndDelete(n, doms[n]) {
			t.Fatalf("CompareAndDelete refused %s", n)
		}
		delete(doms, n)
		check(n+" deleted", doms)
	}
}
