package domains

import (
	"hash/maphash"
	"sync/atomic"
)

// This file keeps the domains asked about often at hand, so that Allow
// skips strings.ToLower and the map (a sync.Map hashes its key through an
// interface): the domain asked about last, and a table of domains
// indexed by a hash of their name. Both only point at domains the map
// holds; a compacted domain is let go (forget).
//
// Pinning a domain found here is as safe as pinning what the map holds:
// a domain leaves the map only once retired (compact), a retired one is
// never pinned, and nothing else replaces a domain in the map.

// hotSlots is the table's size: a broad crawl's domains in use at once
// mostly find a slot of their own.
const hotSlots = 4096

// hotDomains is the table: each slot holds the latest domain whose
// name's hash falls in it.
type hotDomains struct {
	seed  maphash.Seed
	slots [hotSlots]atomic.Pointer[Domain]
}

func newHotDomains() *hotDomains { return &hotDomains{seed: maphash.MakeSeed()} }

// slot is where the domain named name goes.
func (h *hotDomains) slot(name string) *atomic.Pointer[Domain] {
	return &h.slots[maphash.String(h.seed, name)%hotSlots]
}

// put puts d in its slot; it writes only on a change.
func (h *hotDomains) put(d *Domain) {
	if s := h.slot(d.Name); s.Load() != d {
		s.Store(d)
	}
}

// cached returns host's domain, pinned, if one of the caches holds it;
// else nil. A domain is named by its key (its host lower-cased), so a host that is a
// domain's name is its own key: a caller may ask before strings.ToLower.
func (b *Set) cached(host string) *Domain {
	if d := b.last.Load(); d != nil && d.Name == host && d.pin() {
		b.touch(d)
		return d
	}
	if d := b.hot.slot(host).Load(); d != nil && d.Name == host && d.pin() {
		b.touch(d)
		return d
	}
	return nil
}

// remember makes d the domain asked about last when n, a count of d's
// requests (its ticket's order, or its refusals), is its first or one
// rememberEvery later: a host asked again and again is there at once,
// while many hosts in turn (a broad crawl on many cores) seldom write
// the line every call reads. It writes only on a change.
func (b *Set) remember(d *Domain, n uint64) {
	if n%rememberEvery == 1 && b.last.Load() != d {
		b.last.Store(d)
	}
}

const rememberEvery = 64

// forget lets go of d, compacted, wherever the caches hold it.
func (b *Set) forget(d *Domain) {
	b.last.CompareAndSwap(d, nil)
	b.hot.slot(d.Name).CompareAndSwap(d, nil)
}
